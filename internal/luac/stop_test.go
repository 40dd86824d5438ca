package luac

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// A huge source stops loading at the state's deadline with the context's
// error, which loadstring raises instead of returning it as a syntax
// error.
func TestLoadingStopsAtTheContextsDeadline(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	Install(L)
	src := strings.Repeat("x = 1 ", 2e6)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	L.SetContext(ctx)
	start := time.Now()
	_, err := LoadString(L, src, "=big")
	var stop *StoppedError
	if !errors.As(err, &stop) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("LoadString: %v, want a *StoppedError with the deadline", err)
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("stopped after %v", took)
	}
	L.SetGlobal("src", lua.LString(src))
	ctx, cancel = context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	L.SetContext(ctx)
	err = L.DoString(`local f, msg = loadstring(src) error("loadstring returned " .. tostring(msg))`)
	if err == nil || !strings.Contains(err.Error(), "context deadline exceeded") {
		t.Errorf("loadstring under a passed deadline: %v, want the deadline raised", err)
	}
}

func TestLoadingWithoutAContextIsUnchanged(t *testing.T) {
	L := lua.NewState()
	defer L.Close()
	Install(L)
	if _, err := LoadString(L, strings.Repeat("x = 1 ", 1e4), "=big"); err != nil {
		t.Fatal(err)
	}
}
