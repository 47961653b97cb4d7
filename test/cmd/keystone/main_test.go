package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"testing"
	"time"
)

// The JSON line is the contract with the Python tests and the demo: every
// field is filled, the credentials work, and cancelling stops everything.
func TestRunPrintsWorkingCredentialsAndStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, w := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, w, "", false, true)
		w.Close()
	}()
	line, err := bufio.NewReader(r).ReadBytes('\n')
	if err != nil {
		t.Fatalf("no JSON line: %v (run: %v)", err, <-done)
	}
	go io.Copy(io.Discard, r)
	var out Output
	if err := json.Unmarshal(line, &out); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	for name, v := range map[string]string{
		"auth_url": out.AuthURL, "admin.user_id": out.Admin.ID, "service.user_id": out.Service.ID,
		"service.clouds_yaml": out.Service.CloudsYAML, "user.token": out.User.Token, "user.project_id": out.User.ProjectID,
		"fake.url": out.Fake.URL, "fake.image.id": out.Fake.Image.ID, "fake.kube_version": out.Fake.KubeVersion,
	} {
		if v == "" {
			t.Errorf("%s is empty in %s", name, line)
		}
	}
	if _, err := os.Stat(out.Service.CloudsYAML); err != nil {
		t.Errorf("clouds.yaml: %v", err)
	}
	// The user's token reads the seeded image from the fake: Keystone
	// validated it.
	req, _ := http.NewRequest(http.MethodGet, out.Fake.URL+"/image/v2/images/"+out.Fake.Image.ID, nil)
	req.Header.Set("X-Auth-Token", out.User.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("GET seeded image with the user's token: %d", resp.StatusCode)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("run did not return after cancel")
	}
	if _, err := http.Get(out.AuthURL); err == nil {
		t.Errorf("Keystone still answers after stop")
	}
	if _, err := os.Stat(out.Dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("state dir left: %v", err)
	}
}
