package server

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// requestError names the request field that is wrong, its value and what was
// expected. The value is never a secret: checks on secret fields report
// only their length.
type requestError struct {
	Field, Value, Expected string
}

func (e *requestError) Error() string {
	return fmt.Sprintf("%s: got %q, expected %s", e.Field, helmvalues.Clip(e.Value), e.Expected)
}

// InvalidArgument classifies the error for the gRPC boundary.
func (e *requestError) InvalidArgument() bool { return true }

// Bounds on what a request may carry. Magnum's own limits are far below
// them (names 255, labels a few dozen); they exist so a malformed or hostile
// request cannot make the sidecar allocate without bound.
const (
	maxString     = 64 << 10
	maxMapEntries = 512
	maxNodeGroups = 256
	maxNodeCount  = 10000
)

// checkBounds walks any request and rejects strings that are not UTF-8 or
// are too long, and maps or lists that are too big, naming the field path.
func checkBounds(m proto.Message) error {
	return walk(m.ProtoReflect(), "")
}

func walk(m protoreflect.Message, path string) error {
	var err error
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := string(fd.Name())
		if path != "" {
			name = path + "." + name
		}
		secret := proto.GetExtension(fd.Options(), pb.E_Secret).(bool)
		switch {
		case fd.IsMap():
			if v.Map().Len() > maxMapEntries {
				err = &requestError{Field: name, Value: fmt.Sprintf("%d entries", v.Map().Len()), Expected: fmt.Sprintf("at most %d", maxMapEntries)}
				return false
			}
			v.Map().Range(func(k protoreflect.MapKey, mv protoreflect.Value) bool {
				// The key is part of the field's name in the message, so a
				// huge one is clipped there (checkString reports its size).
				entry := name + "[" + helmvalues.Clip(k.String()) + "]"
				if err = checkString(entry, k.String(), false); err != nil {
					return false
				}
				if fd.MapValue().Kind() == protoreflect.StringKind {
					err = checkString(entry, mv.String(), secret)
				}
				return err == nil
			})
		case fd.IsList():
			l := v.List()
			if l.Len() > maxMapEntries {
				err = &requestError{Field: name, Value: fmt.Sprintf("%d items", l.Len()), Expected: fmt.Sprintf("at most %d", maxMapEntries)}
				return false
			}
			for i := 0; i < l.Len() && err == nil; i++ {
				item := fmt.Sprintf("%s[%d]", name, i)
				switch fd.Kind() {
				case protoreflect.MessageKind:
					err = walk(l.Get(i).Message(), item)
				case protoreflect.StringKind:
					err = checkString(item, l.Get(i).String(), secret)
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			err = walk(v.Message(), name)
		case fd.Kind() == protoreflect.StringKind:
			err = checkString(name, v.String(), secret)
		}
		return err == nil
	})
	return err
}

func checkString(field, s string, secret bool) error {
	shown := s
	if secret || len(shown) > 64 {
		shown = fmt.Sprintf("<%d bytes>", len(s))
	}
	if len(s) > maxString {
		return &requestError{Field: field, Value: shown, Expected: fmt.Sprintf("at most %d bytes", maxString)}
	}
	if !utf8.ValidString(s) {
		return &requestError{Field: field, Value: fmt.Sprintf("<%d bytes, not UTF-8>", len(s)), Expected: "UTF-8 text"}
	}
	if strings.ContainsRune(s, 0) {
		return &requestError{Field: field, Value: strings.ReplaceAll(shown, "\x00", `\0`), Expected: "text without NUL characters"}
	}
	return nil
}

func required(field, value string) error {
	if strings.TrimSpace(value) == "" {
		return &requestError{Field: field, Value: value, Expected: "a non-empty value"}
	}
	return nil
}

// checkSpec checks the parts of a ClusterSpec every operation relies on;
// withTemplate also requires the template (operations that render values).
func checkSpec(s *pb.ClusterSpec, withTemplate bool) error {
	if s == nil || s.GetCluster() == nil {
		return &requestError{Field: "spec.cluster", Value: "", Expected: "the Magnum cluster"}
	}
	c := s.GetCluster()
	for _, f := range []struct{ name, value string }{
		{"spec.cluster.uuid", c.GetUuid()}, {"spec.cluster.name", c.GetName()}, {"spec.cluster.project_id", c.GetProjectId()},
	} {
		if err := required(f.name, f.value); err != nil {
			return err
		}
	}
	// The stack_id names the release and every object of the cluster; one
	// Kubernetes would refuse (or one with "/") must not get that far.
	if id := c.GetStackId(); id != "" && !helmvalues.IsReleaseName(id) {
		return &requestError{Field: "spec.cluster.stack_id", Value: id, Expected: "the release name made at create time: lowercase letters, digits and '-', at most 43 characters"}
	}
	for _, ts := range []struct{ name, value string }{{"spec.cluster.created_at", c.GetCreatedAt()}, {"spec.cluster.updated_at", c.GetUpdatedAt()}} {
		if _, err := parseTime(ts.value); err != nil {
			return &requestError{Field: ts.name, Value: ts.value, Expected: "an RFC 3339 timestamp"}
		}
	}
	if withTemplate {
		t := s.GetClusterTemplate()
		if t == nil {
			return &requestError{Field: "spec.cluster_template", Value: "", Expected: "the cluster's template"}
		}
		if err := required("spec.cluster_template.image_id", t.GetImageId()); err != nil {
			return err
		}
	}
	if len(s.GetNodegroups()) > maxNodeGroups {
		return &requestError{Field: "spec.nodegroups", Value: fmt.Sprintf("%d node groups", len(s.GetNodegroups())), Expected: fmt.Sprintf("at most %d", maxNodeGroups)}
	}
	seen := map[string]bool{}
	for i, ng := range s.GetNodegroups() {
		field := fmt.Sprintf("spec.nodegroups[%d]", i)
		for _, f := range []struct{ name, value string }{{".uuid", ng.GetUuid()}, {".name", ng.GetName()}, {".role", ng.GetRole()}} {
			if err := required(field+f.name, f.value); err != nil {
				return err
			}
		}
		if seen[ng.GetUuid()] {
			return &requestError{Field: field + ".uuid", Value: ng.GetUuid(), Expected: "a uuid no other node group has"}
		}
		seen[ng.GetUuid()] = true
		if n := ng.GetNodeCount(); n < 0 || n > maxNodeCount {
			return &requestError{Field: field + ".node_count", Value: fmt.Sprint(n), Expected: fmt.Sprintf("between 0 and %d", maxNodeCount)}
		}
	}
	return nil
}

// checkNodeGroupRef requires uuid to name one of the spec's node groups.
func checkNodeGroupRef(s *pb.ClusterSpec, uuid string) (*pb.NodeGroup, error) {
	if err := required("nodegroup_uuid", uuid); err != nil {
		return nil, err
	}
	for _, ng := range s.GetNodegroups() {
		if ng.GetUuid() == uuid {
			return ng, nil
		}
	}
	return nil, &requestError{Field: "nodegroup_uuid", Value: uuid, Expected: "the uuid of one of spec.nodegroups"}
}

func checkContext(c *pb.RequestContext, needToken bool) error {
	if !needToken {
		return nil
	}
	if c == nil || c.GetAuthToken() == "" {
		return &requestError{Field: "context.auth_token", Value: "", Expected: "the caller's Keystone token"}
	}
	return nil
}
