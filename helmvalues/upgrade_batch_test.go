package helmvalues

import (
	"errors"
	"reflect"
	"testing"
)

func TestWithUpgradeBatch(t *testing.T) {
	tests := []struct {
		name    string
		batch   int
		want    any // nodeGroupDefaults.rolloutStrategy; nil: not set
		wantErr bool
	}{
		{"Magnum's default, one at a time: the chart's default", 1, nil, false},
		{"five at a time", 5, map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": 5, "maxSurge": 0, "deletePolicy": "Random"}}, false},
		{"not sent: the chart's default", 0, nil, false},
		{"negative", -2, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Build(minimalInput(t), DefaultConfig())
			if err != nil {
				t.Fatal(err)
			}
			err = WithUpgradeBatch(res.Values, tt.batch)
			var fe *FieldError
			if tt.wantErr != (err != nil) || (err != nil && (!errors.As(err, &fe) || fe.Field != "max_batch_size" || fe.Value != "-2")) {
				t.Fatalf("err = %v, want error %v naming max_batch_size and its value", err, tt.wantErr)
			}
			defaults, _ := res.Values["nodeGroupDefaults"].(map[string]any)
			if got := defaults["rolloutStrategy"]; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("nodeGroupDefaults.rolloutStrategy = %v, want %v", got, tt.want)
			}
		})
	}
}
