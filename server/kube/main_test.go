package kube

import (
	"context"
	"log"
	"log/slog"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/magnum-capi/magnum-capi/test/testbed"
)

// env is the test bed the Lease tests share: a real kube-apiserver.
var env *testbed.Env

func TestMain(m *testing.M) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	var err error
	env, err = testbed.Start(ctx, testbed.Options{})
	cancel()
	if err != nil {
		log.Fatalf("starting the test bed: %v", err)
	}
	code := m.Run()
	if err := env.Stop(); err != nil {
		log.Printf("stopping the test bed: %v", err)
	}
	os.Exit(code)
}

var quiet = slog.New(slog.DiscardHandler)

// newNamespace is a fresh namespace for one test.
func newNamespace(t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "lease-"}}
	if err := env.Client.Create(context.Background(), ns); err != nil {
		t.Fatal(err)
	}
	return ns.Name
}
