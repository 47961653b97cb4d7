package kube

import (
	"strings"
	"testing"
)

func TestParseKubeconfig(t *testing.T) {
	const kubeconfig = `apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://203.0.113.10:6443", certificate-authority-data: Q0EtUEVN}
users:
- name: admin
  user: {client-certificate-data: Q0VSVA==, client-key-data: S0VZ}
- name: bot
  user: {token: s3cret}
contexts:
- name: admin@c
  context: {cluster: c, user: admin}
- name: bot@c
  context: {cluster: c, user: bot}
current-context: %s
`
	tests := []struct {
		name, data string
		want       WorkloadAccess
		err        string
	}{
		{"client certificate", strings.Replace(kubeconfig, "%s", "admin@c", 1),
			WorkloadAccess{Server: "https://203.0.113.10:6443", CAData: []byte("CA-PEM"), CertData: []byte("CERT"), KeyData: []byte("KEY")}, ""},
		{"bearer token", strings.Replace(kubeconfig, "%s", "bot@c", 1),
			WorkloadAccess{Server: "https://203.0.113.10:6443", CAData: []byte("CA-PEM"), BearerToken: "s3cret"}, ""},
		{"empty", "", WorkloadAccess{}, `no kubeconfig under "value"`},
		{"no credential", strings.Replace(strings.Replace(kubeconfig, "%s", "none@c", 1), "contexts:", "contexts:\n- name: none@c\n  context: {cluster: c}", 1),
			WorkloadAccess{}, "lacks a server, its CA data or a credential"},
		{"not YAML", "{", WorkloadAccess{}, "reading the kubeconfig"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseKubeconfig([]byte(tt.data))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Server != tt.want.Server || string(got.CAData) != string(tt.want.CAData) || string(got.CertData) != string(tt.want.CertData) ||
				string(got.KeyData) != string(tt.want.KeyData) || got.BearerToken != tt.want.BearerToken {
				t.Errorf("got %+v, want %+v", *got, tt.want)
			}
		})
	}
}
