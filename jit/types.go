package jit

import (
	"fmt"
	"strings"

	"github.com/gluaproject/glua/device"
)

// Type is the type of a value in a kernel.
type Type uint8

const (
	Void Type = iota
	Bool
	Int // int64
	Float32
	Float64
)

var typeNames = [...]string{Void: "nothing", Bool: "boolean", Int: "integer", Float32: "float32", Float64: "float64"}

func (t Type) String() string { return typeNames[t] }

// IsFloat reports whether t is a float type.
func (t Type) IsFloat() bool { return t == Float32 || t == Float64 }

// Arg is one argument of a call signature: an array of a dtype and rank,
// or a number that is an integer or a float.
type Arg struct {
	Array bool
	DType device.DType // arrays
	Rank  int          // arrays
	Float bool         // numbers: a float rather than an integer
}

func (a Arg) String() string {
	switch {
	case a.Array:
		return fmt.Sprintf("%s[%dD]", a.DType, a.Rank)
	case a.Float:
		return "float"
	}
	return "integer"
}

// Signature is the types of one launch's arguments, in order; kernels are
// translated and cached once per signature.
type Signature []Arg

func (s Signature) String() string {
	parts := make([]string, len(s))
	for i, a := range s {
		parts[i] = a.String()
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// MaxRank is the most dimensions a kernel's array may have; the bounds
// error of a GPU launch records this many indices.
const MaxRank = 4

// computeType is the type a kernel computes an element of d in.
func computeType(d device.DType) Type {
	switch d {
	case device.Float64:
		return Float64
	case device.Float32, device.Float16, device.BFloat16:
		return Float32
	}
	return Int
}

// atomicDTypes are the dtypes with a hardware atomic add on every GPU glua
// supports.
func atomicDType(d device.DType) bool {
	switch d {
	case device.Float32, device.Float64, device.Int32, device.Int64:
		return true
	}
	return false
}
