package helmvalues

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Input is everything one values build reads: Magnum's objects plus the
// OpenStack facts the sidecar resolved before calling Build.
type Input struct {
	ClusterTemplate ClusterTemplate `json:"cluster_template"`
	Cluster         Cluster         `json:"cluster"`
	NodeGroups      []NodeGroup     `json:"nodegroups"`
	Image           Image           `json:"image"`
	// NodeGroupImages are the resolved images of worker node groups whose
	// image_id is not the template's, by that image_id: such a group runs
	// its own image and Kubernetes version (upgraded on its own).
	NodeGroupImages   map[string]Image `json:"nodegroup_images,omitempty"`
	VolumeTypes       []VolumeType     `json:"volume_types"`
	ExternalNetworkID string           `json:"external_network_id"`
	// FixedNetworkID and FixedSubnetID are resolved from names by the sidecar;
	// empty means the cluster's (else the template's) value is used as an id.
	FixedNetworkID string `json:"fixed_network_id,omitempty"`
	FixedSubnetID  string `json:"fixed_subnet_id,omitempty"`
	// Flavors are the worker node groups' flavors as the sidecar looked
	// them up, by the reference Magnum holds (id or name); an autoscaled
	// group's MachineDeployment is told their capacity (scale from zero).
	Flavors map[string]Flavor `json:"flavors,omitempty"`
}

// maxInputBytes bounds DecodeInput: real inputs are a few kilobytes.
const maxInputBytes = 8 << 20

// DecodeInput reads one Input document (JSON). Unknown fields are ignored, as
// Magnum grows fields between releases. Malformed input is a *FieldError.
func DecodeInput(r io.Reader) (Input, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxInputBytes+1))
	if err != nil {
		return Input{}, fmt.Errorf("reading input: %w", err)
	}
	return ParseInput(data)
}

// ParseInput decodes one Input document from JSON bytes.
func ParseInput(data []byte) (Input, error) {
	if len(data) > maxInputBytes {
		return Input{}, &FieldError{Field: "input", Value: fmt.Sprintf("%d bytes", len(data)), Expected: fmt.Sprintf("at most %d bytes", maxInputBytes)}
	}
	var in Input
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&in); err != nil {
		return Input{}, inputError(err)
	}
	if dec.More() {
		return Input{}, &FieldError{Field: "input", Value: "trailing data", Expected: "exactly one JSON object"}
	}
	return in, nil
}

func inputError(err error) error {
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := typeErr.Field
		if field == "" {
			field = "input"
		}
		return &FieldError{Field: field, Value: "a JSON " + typeErr.Value, Expected: "a value of type " + typeErr.Type.String()}
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return &FieldError{Field: "input", Value: fmt.Sprintf("byte %d", syntaxErr.Offset), Expected: "valid JSON (" + syntaxErr.Error() + ")"}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return &FieldError{Field: "input", Value: "truncated document", Expected: "one complete JSON object"}
	}
	return &FieldError{Field: "input", Value: "undecodable document", Expected: "a JSON object (" + err.Error() + ")"}
}
