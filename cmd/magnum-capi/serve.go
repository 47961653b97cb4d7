package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/magnum-capi/magnum-capi/server"
	"github.com/magnum-capi/magnum-capi/server/config"
)

func init() {
	commands["serve"] = command{summary: "run the gRPC sidecar beside magnum-conductor", run: runServe}
}

func runServe(ctx context.Context, args []string, _ io.Reader, _, stderr io.Writer) int {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	file := fs.String("config", os.Getenv("MAGNUM_CAPI_CONFIG"), "configuration file (YAML); MAGNUM_CAPI_* variables override it")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	cfg, err := config.Load(*file, nil)
	if err != nil {
		fmt.Fprintln(stderr, "magnum-capi serve:", err)
		return 2
	}
	log := newLogger(cfg.Log, stderr)
	if err := server.Run(ctx, cfg, log); err != nil {
		log.Error("sidecar stopped", "err", err)
		return 1
	}
	return 0
}

func newLogger(c config.Log, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.Level))
	opts := &slog.HandlerOptions{Level: level}
	if c.Format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	return slog.New(slog.NewJSONHandler(w, opts))
}
