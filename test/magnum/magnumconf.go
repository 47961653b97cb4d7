package magnum

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// An ini is a magnum.conf as ordered sections of ordered options, without
// comments (oslo.config reads the same values).
type ini struct {
	sections []string
	options  map[string][]iniOption
}

type iniOption struct{ key, value string }

func parseINI(text string) (*ini, error) {
	f := &ini{options: map[string][]iniOption{}}
	section := ""
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			if _, ok := f.options[section]; !ok {
				f.sections = append(f.sections, section)
				f.options[section] = nil
			}
		default:
			key, value, ok := strings.Cut(line, "=")
			if !ok || section == "" {
				return nil, fmt.Errorf("line %d %q: expected key = value inside a [section]", n+1, line)
			}
			f.options[section] = append(f.options[section], iniOption{strings.TrimSpace(key), strings.TrimSpace(value)})
		}
	}
	return f, nil
}

func (f *ini) index(section, key string) int {
	for i, o := range f.options[section] {
		if o.key == key {
			return i
		}
	}
	return -1
}

// set replaces the value of an option the file has.
func (f *ini) set(section, key, value string) error {
	i := f.index(section, key)
	if i < 0 {
		return fmt.Errorf("[%s] %s is not in the operator guide's magnum.conf: a test may only change the site values the guide shows", section, key)
	}
	f.options[section][i].value = value
	return nil
}

func (f *ini) String() string {
	var b strings.Builder
	for i, s := range f.sections {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%s]\n", s)
		for _, o := range f.options[s] {
			fmt.Fprintf(&b, "%s = %s\n", o.key, o.value)
		}
	}
	return b.String()
}

// Site is one deployment's values for the guide's magnum.conf, as
// section -> key -> value.
type Site map[string]map[string]string

// MagnumConf is the operator guide's magnum.conf with the site's values: it
// fails if the site names an option the guide does not have, so the test's
// configuration cannot drift from the documented one.
func MagnumConf(site Site) (string, error) {
	block, err := GuideBlock("magnum-conf")
	if err != nil {
		return "", err
	}
	f, err := parseINI(block)
	if err != nil {
		return "", fmt.Errorf("the operator guide's magnum.conf: %w", err)
	}
	for _, section := range slices.Sorted(maps.Keys(site)) {
		for _, key := range slices.Sorted(maps.Keys(site[section])) {
			if err := f.set(section, key, site[section][key]); err != nil {
				return "", err
			}
		}
	}
	return f.String(), nil
}
