package runtime_test

import (
	"strings"
	"testing"

	"github.com/gluaproject/glua/runtime"
)

// TestSandboxedScriptCannotRaiseItsLimitsPastTheHosts: a sandboxed script
// may lower its limits and raise them back, never past what the host set,
// and the error names the ceiling and where it came from.
func TestSandboxedScriptCannotRaiseItsLimitsPastTheHosts(t *testing.T) {
	rt := newCPU(t, runtime.Options{Sandbox: true, HardLimit: "64MiB", SoftLimit: "32MiB"})
	err := rt.DoString(`
		local pool, cuda = require("pool"), require("cuda")
		local function refused(t, want)
			local ok, err = pcall(pool.set_limit, t)
			assert(not ok, "set_limit past the ceiling succeeded")
			assert(err:find(want, 1, true), err)
		end
		refused({hard = false}, "pool.set_limit: the sandbox cannot clear the hard limit: its ceiling is 64 MiB (Options.HardLimit)")
		refused({hard = "200MiB"}, "pool.set_limit: hard limit 200 MiB is above the sandbox's ceiling of 64 MiB (Options.HardLimit)")
		refused({soft = false}, "soft limit: its ceiling is 32 MiB (Options.SoftLimit)")
		refused({soft = "48MiB"}, "soft limit 48 MiB is above the sandbox's ceiling of 32 MiB")
		assert(pool.limits().hard == 64 * 2^20 and pool.limits().soft == 32 * 2^20, "a refused set_limit changed the limits")
		pool.set_limit{hard = "16MiB", soft = "8MiB"}
		assert(not pcall(cuda.zeros, {8 * 2^20}), "32 MiB fit under a 16 MiB limit")
		pool.set_limit{hard = 64 * 2^20, soft = "32MiB"} -- back up to the ceiling
		assert(pool.limits().hard == 64 * 2^20)
		local ok, err = pcall(cuda.zeros, {32 * 2^20}) -- 128 MiB
		assert(not ok and err:find("hard limit 64.00 MiB", 1, true), tostring(err))
	`)
	if err != nil {
		t.Fatal(err)
	}
}

func TestHostCanMoveTheSandboxesCeiling(t *testing.T) {
	rt := newCPU(t, runtime.Options{Sandbox: true, HardLimit: "64MiB"})
	if err := rt.SetLimits(runtime.LimitChange{}, runtime.LimitChange{Set: true, Value: "128MiB"}); err != nil {
		t.Fatal(err)
	}
	if err := rt.DoString(`require("pool").set_limit{hard = "128MiB"}`); err != nil {
		t.Fatalf("raising to the host's new limit: %v", err)
	}
	err := rt.DoString(`require("pool").set_limit{hard = "129MiB"}`)
	if err == nil || !strings.Contains(err.Error(), "ceiling of 128 MiB (Runtime.SetLimits)") {
		t.Fatalf("raising past the host's new limit: %v", err)
	}
}

func TestScriptsOutsideTheSandboxSetAnyLimit(t *testing.T) {
	rt := newCPU(t, runtime.Options{HardLimit: "64MiB"})
	if err := rt.DoString(`local pool = require("pool")
		pool.set_limit{hard = false}
		assert(pool.limits().hard == false)
		pool.set_limit{hard = "128MiB"}`); err != nil {
		t.Fatal(err)
	}
}

// TestSandboxedTenantCannotLiftItsQuota: on a Shared pool, a sandboxed
// runtime's quota is its ceiling, so it cannot take its neighbour's memory.
func TestSandboxedTenantCannotLiftItsQuota(t *testing.T) {
	s := newShared(t, runtime.Options{HardLimit: "256MiB"})
	tenant := newTenant(t, s, runtime.Options{Sandbox: true, HardLimit: "32MiB"})
	neighbour := newTenant(t, s, runtime.Options{HardLimit: "128MiB"})
	err := tenant.DoString(`
		local pool, cuda = require("pool"), require("cuda")
		local ok, err = pcall(pool.set_limit, {hard = false})
		assert(not ok and err:find("ceiling is 32 MiB (Options.HardLimit)", 1, true), tostring(err))
		ok, err = pcall(pool.set_limit, {hard = "200MiB"})
		assert(not ok and err:find("ceiling of 32 MiB", 1, true), tostring(err))
		ok, err = pcall(cuda.zeros, {16 * 2^20}) -- 64 MiB
		assert(not ok and err:find("hard limit 32.00 MiB", 1, true), tostring(err))
		held = cuda.zeros({7 * 2^20}) -- 28 MiB
	`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := neighbour.DeviceArray([]int{32 * mib}, runtime.Float32); err != nil { // 128 MiB
		t.Fatalf("the neighbour cannot have its quota: %v", err)
	}
}
