package server

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log/slog"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/magnum-capi/magnum-capi/server/config"
)

// issuer is a CA made for one test.
type issuer struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newIssuer(t *testing.T, name string) *issuer {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &issuer{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a leaf certificate and its key, PEM encoded.
func (ca *issuer) issue(t *testing.T, cn string, usage x509.ExtKeyUsage) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

func writeFiles(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestTCPRequiresClientCertificate: a TCP listener configured with tls.*
// (as Run builds it) answers only clients whose certificate the client CA
// signed.
func TestTCPRequiresClientCertificate(t *testing.T) {
	serverCA, clientCA, strangerCA := newIssuer(t, "server CA"), newIssuer(t, "magnum client CA"), newIssuer(t, "someone else")
	srvCert, srvKey := serverCA.issue(t, "magnum-capi", x509.ExtKeyUsageServerAuth)
	cliCert, cliKey := clientCA.issue(t, "magnum-conductor", x509.ExtKeyUsageClientAuth)
	strangerCert, strangerKey := strangerCA.issue(t, "magnum-conductor", x509.ExtKeyUsageClientAuth)
	dir := writeFiles(t, map[string][]byte{"server.crt": srvCert, "server.key": srvKey, "client-ca.crt": clientCA.pem})

	tlsConfig, err := serverTLS(config.TLS{
		CertFile: filepath.Join(dir, "server.crt"), KeyFile: filepath.Join(dir, "server.key"), ClientCAFile: filepath.Join(dir, "client-ca.crt"),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, health := newGRPCServer(NewService(nil), grpcOptions{Log: slog.New(slog.NewTextHandler(io.Discard, nil)), TLS: tlsConfig})
	setServing(health, true)
	lis, err := Listen("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(lis)
	defer srv.Stop()

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(serverCA.pem)
	pair := func(c, k []byte) []tls.Certificate {
		kp, err := tls.X509KeyPair(c, k)
		if err != nil {
			t.Fatal(err)
		}
		return []tls.Certificate{kp}
	}
	tests := []struct {
		name    string
		certs   []tls.Certificate
		wantErr bool
	}{
		{"no client certificate", nil, true},
		{"certificate of another CA", pair(strangerCert, strangerKey), true},
		{"certificate of the client CA", pair(cliCert, cliKey), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}
			if tt.certs != nil {
				// Present the certificate even when the server's list of
				// acceptable CAs does not name its issuer (Go's client would
				// otherwise send none), so the server's own check is tested.
				cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &tt.certs[0], nil }
			}
			creds := credentials.NewTLS(cfg)
			conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(creds))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			if tt.wantErr {
				if err == nil {
					t.Fatalf("answered %v without a trusted client certificate", resp.GetStatus())
				}
				t.Logf("refused: %v", err)
				return
			}
			if err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Errorf("trusted client: %v, %v", resp.GetStatus(), err)
			}
		})
	}
}

func TestServerTLSErrorsNameTheOption(t *testing.T) {
	ca := newIssuer(t, "server CA")
	crt, key := ca.issue(t, "magnum-capi", x509.ExtKeyUsageServerAuth)
	dir := writeFiles(t, map[string][]byte{"empty.pem": []byte("not a certificate"), "server.crt": crt, "server.key": key})
	in := func(name string) string { return filepath.Join(dir, name) }
	tests := []struct {
		name string
		tls  config.TLS
		want string
	}{
		{"missing key pair", config.TLS{CertFile: in("nope.crt"), KeyFile: in("nope.key"), ClientCAFile: in("empty.pem")}, "tls.certFile/tls.keyFile"},
		{"client CA without a certificate", config.TLS{CertFile: in("server.crt"), KeyFile: in("server.key"), ClientCAFile: in("empty.pem")}, "tls.clientCAFile: no PEM certificate found"},
		{"client CA missing", config.TLS{CertFile: in("server.crt"), KeyFile: in("server.key"), ClientCAFile: in("nope.pem")}, "tls.clientCAFile"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serverTLS(tt.tls)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("serverTLS: %v, want an error naming %s", err, tt.want)
			}
		})
	}
}
