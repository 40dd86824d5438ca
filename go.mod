module github.com/gluaproject/glua

go 1.25.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/chzyer/readline v1.5.1
	github.com/dustin/go-humanize v1.1.0
	github.com/ebitengine/purego v0.11.3
	github.com/google/btree v1.1.3
	github.com/yuin/gopher-lua v1.1.2
	gonum.org/v1/gonum v0.17.0
)

require golang.org/x/sys v0.0.0-20220310020820-b874c991c1a5 // indirect
