package device

import (
	"fmt"
	"strings"
)

// DType is the element type of an array. The zero value is invalid, so that a
// forgotten dtype is caught rather than silently read as float32.
type DType uint8

const (
	Invalid DType = iota
	Float32
	Float64
	Float16
	BFloat16
	Int32
	Int64
	Uint8
)

// DTypes lists every valid dtype in the order the documentation gives them.
var DTypes = []DType{Float32, Float64, Float16, BFloat16, Int32, Int64, Uint8}

var dtypeNames = [...]string{
	Invalid:  "invalid",
	Float32:  "float32",
	Float64:  "float64",
	Float16:  "float16",
	BFloat16: "bfloat16",
	Int32:    "int32",
	Int64:    "int64",
	Uint8:    "uint8",
}

var dtypeSizes = [...]int{Float32: 4, Float64: 8, Float16: 2, BFloat16: 2, Int32: 4, Int64: 8, Uint8: 1}

// ParseDType turns a dtype name into a DType. The error lists the valid names
// because the usual cause is a typo ("float" or "fp32").
func ParseDType(name string) (DType, error) {
	for _, d := range DTypes {
		if dtypeNames[d] == name {
			return d, nil
		}
	}
	names := make([]string, len(DTypes))
	for i, d := range DTypes {
		names[i] = dtypeNames[d]
	}
	return Invalid, fmt.Errorf("unknown dtype %q (expected one of %s)", name, strings.Join(names, ", "))
}

func (d DType) String() string {
	if int(d) < len(dtypeNames) {
		return dtypeNames[d]
	}
	return fmt.Sprintf("dtype(%d)", uint8(d))
}

// Size is the number of bytes of one element; 0 for an invalid dtype.
func (d DType) Size() int {
	if d == Invalid || int(d) >= len(dtypeSizes) {
		return 0
	}
	return dtypeSizes[d]
}

// Valid reports whether d is one of DTypes.
func (d DType) Valid() bool { return d != Invalid && int(d) < len(dtypeNames) }

// IsFloat reports whether d is a floating-point type.
func (d DType) IsFloat() bool {
	return d == Float32 || d == Float64 || d == Float16 || d == BFloat16
}

// IsHalf reports whether d is one of the 2-byte float types, which glua stores
// as raw bits and computes with in float32.
func (d DType) IsHalf() bool { return d == Float16 || d == BFloat16 }
