package luac_test

import (
	"fmt"

	lua "github.com/yuin/gopher-lua"

	"github.com/gluaproject/glua/internal/luac"
)

func ExampleLoadString() {
	L := lua.NewState()
	defer L.Close()
	fn, err := luac.LoadString(L, "local a, b = 1, 2; a, b = b, a; return a, b", "swap")
	if err != nil {
		fmt.Println(err)
		return
	}
	L.Push(fn)
	if err := L.PCall(0, 2, nil); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(L.Get(-2), L.Get(-1))
	// Output: 2 1
}

func ExampleInstall() {
	L := lua.NewState()
	defer L.Close()
	luac.Install(L)
	err := L.DoString(`
		local f = loadstring("local x, y = 0, 0; x, y = x + 1, x + y; return x, y")
		print(f())
	`)
	if err != nil {
		fmt.Println(err)
	}
	// Output: 1	0
}
