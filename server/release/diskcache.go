package release

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// diskCache is one source's directory in the chart cache:
//
//	<cacheDir>/<source key>/source            the repository, for people
//	<cacheDir>/<source key>/index.yaml        an HTTP repository's index
//	<cacheDir>/<source key>/<name>-<version>.tgz
//	<cacheDir>/<source key>/<name>-<version>.tgz.sha256
//
// A chart counts as cached only with its digest file, which is written
// after the archive: a crash between the two leaves an archive that is
// fetched again, never one that is trusted unverified.
type diskCache struct {
	dir  string
	name string
}

func newDiskCache(cacheDir string, src Source) (diskCache, error) {
	d := diskCache{dir: filepath.Join(cacheDir, src.cacheKey()), name: src.Name}
	if err := os.MkdirAll(d.dir, 0o750); err != nil {
		return d, &CacheDirError{Dir: cacheDir, Err: err}
	}
	if err := writeAtomic(filepath.Join(d.dir, "source"), []byte(src.String()+" "+src.Name+"\n")); err != nil {
		return d, &CacheDirError{Dir: cacheDir, Err: err}
	}
	return d, nil
}

func (d diskCache) archivePath(version string) string {
	return filepath.Join(d.dir, d.name+"-"+version+".tgz")
}

func (d diskCache) indexPath() string { return filepath.Join(d.dir, "index.yaml") }

// load returns a cached archive after checking it against the digest
// recorded when it was fetched. ok is false when the version is not cached;
// a corrupt entry is removed (and reported) so the caller fetches again.
func (d diskCache) load(version string) (data []byte, digest string, ok bool, err error) {
	want, err := os.ReadFile(d.archivePath(version) + ".sha256")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("reading the chart cache: %w", err)
	}
	digest = strings.TrimSpace(string(want))
	data, err = os.ReadFile(d.archivePath(version))
	if errors.Is(err, fs.ErrNotExist) {
		_ = os.Remove(d.archivePath(version) + ".sha256")
		return nil, "", false, nil
	}
	if err != nil {
		return nil, "", false, fmt.Errorf("reading the chart cache: %w", err)
	}
	if got := sha256Hex(data); got != digest {
		d.remove(version)
		return nil, "", false, &corruptError{path: d.archivePath(version), want: digest, got: got}
	}
	return data, digest, true, nil
}

// corruptError: a cached archive no longer matches its digest (disk
// corruption, a hand edit). The entry has been removed.
type corruptError struct{ path, want, got string }

func (e *corruptError) Error() string {
	return fmt.Sprintf("cached chart %s has sha256 %s, recorded %s; removed it", e.path, e.got, e.want)
}

// store writes the archive, then its digest, each atomically.
func (d diskCache) store(version string, data []byte, digest string) error {
	if err := writeAtomic(d.archivePath(version), data); err != nil {
		return fmt.Errorf("writing the chart cache: %w", err)
	}
	if err := writeAtomic(d.archivePath(version)+".sha256", []byte(digest+"\n")); err != nil {
		return fmt.Errorf("writing the chart cache: %w", err)
	}
	return nil
}

func (d diskCache) remove(version string) {
	_ = os.Remove(d.archivePath(version) + ".sha256")
	_ = os.Remove(d.archivePath(version))
}

// versions lists the cached versions, for error messages.
func (d diskCache) versions() []string {
	matches, _ := filepath.Glob(filepath.Join(d.dir, d.name+"-*.tgz.sha256"))
	out := make([]string, 0, len(matches))
	for _, m := range matches {
		v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(m), d.name+"-"), ".tgz.sha256")
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// writeAtomic replaces path with data so that readers, including another
// sidecar sharing the directory, see the old file or the new one, never
// half of one.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o640); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// normalizeDigest turns "sha256:<hex>" (OCI) or "<hex>" (index.yaml) into
// lowercase hex; "" when it is not a sha256 digest.
func normalizeDigest(d string) string {
	d = strings.ToLower(strings.TrimSpace(d))
	d = strings.TrimPrefix(d, "sha256:")
	if len(d) != 64 || strings.Trim(d, "0123456789abcdef") != "" {
		return ""
	}
	return d
}
