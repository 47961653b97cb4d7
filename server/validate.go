package server

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"buf.build/go/protovalidate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/magnum-capi/magnum-capi/helmvalues"
	pb "github.com/magnum-capi/magnum-capi/proto/magnumcapi/v1"
)

// requestError names the request field that is wrong, its value as shown
// by shown or valueOf (never a secret: a secret field shows only its size)
// and the rule it breaks.
type requestError struct {
	Field, Value, Expected string
}

func (e *requestError) Error() string {
	return fmt.Sprintf("%s: got %s: %s", e.Field, e.Value, e.Expected)
}

// InvalidArgument classifies the error for the gRPC boundary.
func (e *requestError) InvalidArgument() bool { return true }

// requestRules checks requests against the rules proto/ declares
// (buf.validate). They bound every string, map and list a request carries
// (64 KiB, no NUL; 512 entries) so that a malformed or hostile request
// cannot make the sidecar allocate without bound, and state what each
// operation needs of its request. The proto decoder has already refused
// strings that are not UTF-8. All request types are compiled up front, so
// checking takes no lock.
var requestRules = sync.OnceValues(func() (protovalidate.Validator, error) {
	services := pb.File_magnumcapi_v1_driver_proto.Services()
	var requests []protoreflect.MessageDescriptor
	for i := range services.Len() {
		methods := services.Get(i).Methods()
		for j := range methods.Len() {
			requests = append(requests, methods.Get(j).Input())
		}
	}
	return protovalidate.New(protovalidate.WithDisableLazy(), protovalidate.WithMessageDescriptors(requests...))
})

// specRequest is every request that carries a ClusterSpec.
type specRequest interface{ GetSpec() *pb.ClusterSpec }

// checkRequest refuses a request that breaks a rule of proto/, naming the
// first field that does, and one whose timestamps do not parse.
func checkRequest(req proto.Message) error {
	rules, err := requestRules()
	if err != nil {
		return fmt.Errorf("compiling the request rules: %w", err)
	}
	if err := rules.Validate(req); err != nil {
		var invalid *protovalidate.ValidationError
		if errors.As(err, &invalid) && len(invalid.Violations) > 0 {
			return violationError(req.ProtoReflect(), firstOnAField(invalid.Violations))
		}
		return fmt.Errorf("checking the request: %w", err)
	}
	if r, ok := req.(specRequest); ok {
		return checkTimestamps(r.GetSpec().GetCluster())
	}
	return nil
}

// firstOnAField is the first violation of a rule on a field, else the
// first: a rule on a whole request relates its fields (nodegroup_uuid to
// spec.nodegroups), and what is wrong with a field itself comes first.
func firstOnAField(vs []*protovalidate.Violation) *protovalidate.Violation {
	for _, v := range vs {
		if len(v.Proto.GetField().GetElements()) > 0 {
			return v
		}
	}
	return vs[0]
}

// checkTimestamps: Magnum's timestamps must parse as parseTime reads them,
// which a rule of proto/ cannot say (its CEL has RFC 3339 alone, and fails
// rather than refuses).
func checkTimestamps(c *pb.Cluster) error {
	for _, ts := range []struct{ name, value string }{{"spec.cluster.created_at", c.GetCreatedAt()}, {"spec.cluster.updated_at", c.GetUpdatedAt()}} {
		if _, err := parseTime(ts.value); err != nil {
			return &requestError{Field: ts.name, Value: shown(ts.value, false), Expected: "must be an RFC 3339 timestamp"}
		}
	}
	return nil
}

// violationError is the requestError of one protovalidate violation. A CEL
// rule on a message, or on a field holding one, names in its id the field
// within it that it is about ("context.auth_token"; "nodegroup_uuid.worker"
// names nodegroup_uuid), and the error names that field; an id that names
// no field ("not_blank") leaves the error on the field the rule is on.
func violationError(req protoreflect.Message, v *protovalidate.Violation) error {
	field, fd, value := fieldPath(v), v.FieldDescriptor, v.FieldValue
	var m protoreflect.Message // the message the rule id's path starts in
	switch {
	case field == "":
		m = req
	case isMessage(fd) && value.IsValid():
		m = value.Message()
	}
	for name := range strings.SplitSeq(v.Proto.GetRuleId(), ".") {
		if m == nil || m.Descriptor().Fields().ByName(protoreflect.Name(name)) == nil {
			break
		}
		fd = m.Descriptor().Fields().ByName(protoreflect.Name(name))
		field = strings.TrimPrefix(field+"."+name, ".")
		set := m.Has(fd)
		value, m = m.Get(fd), nil
		if isMessage(fd) {
			// An unset message shows as nothing, and its fields as unset.
			m = value.Message()
			if !set {
				value = protoreflect.Value{}
			}
		}
	}
	return &requestError{Field: field, Value: valueOf(fd, value), Expected: strings.ReplaceAll(v.Proto.GetMessage(), "\x00", "NUL")}
}

// isMessage: fd holds one message (not a list or map of them).
func isMessage(fd protoreflect.FieldDescriptor) bool {
	return fd != nil && fd.Kind() == protoreflect.MessageKind && !fd.IsList() && !fd.IsMap()
}

// fieldPath is the violation's field as protovalidate.FieldPathString
// writes it, but with map keys unquoted and clipped: a key is part of the
// name, and may be huge.
func fieldPath(v *protovalidate.Violation) string {
	var b strings.Builder
	for i, e := range v.Proto.GetField().GetElements() {
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(e.GetFieldName())
		switch {
		case e.HasIndex():
			b.WriteString("[" + strconv.FormatUint(e.GetIndex(), 10) + "]")
		case e.HasStringKey():
			b.WriteString("[" + helmvalues.Clip(e.GetStringKey()) + "]")
		}
	}
	return b.String()
}

// valueOf shows a field's value in an error: a string in quotes (its size
// when secret or long), the size of a map or list, a number as it is. fd is
// nil when v is a map's key or value.
func valueOf(fd protoreflect.FieldDescriptor, v protoreflect.Value) string {
	if !v.IsValid() {
		return "nothing"
	}
	switch x := v.Interface().(type) {
	case string:
		return shown(x, fd != nil && proto.GetExtension(fd.Options(), pb.E_Secret).(bool))
	case protoreflect.Map:
		return fmt.Sprintf("%d entries", x.Len())
	case protoreflect.List:
		return fmt.Sprintf("%d items", x.Len())
	case protoreflect.Message:
		return "a " + string(x.Descriptor().Name())
	}
	return v.String()
}

func shown(s string, secret bool) string {
	if secret || len(s) > 64 {
		return fmt.Sprintf("<%d bytes>", len(s))
	}
	return strconv.Quote(s)
}
