// Package arraytext writes an array's elements as text, the way NumPy's
// repr does: nested brackets, every element right-aligned to one width,
// lines wrapped at 75 characters, and an array of more than 1,000
// elements summarised by the first and last three of each dimension
// longer than six, with "..." between.
//
// Integer dtypes are written as integers. Floats are written with one
// number of decimals throughout the array, at most four: as many as the
// element that needs most, where an element needs those of the fewest
// digits that read back as the same value of its dtype (a float32 0.1
// needs one). So {0.5, 0.25} is [0.50, 0.25], {1/3} is [0.3333], and
// {1, 2} is [1., 2.] (NumPy's mark of a float). Scientific notation
// (1.5e+08), with up to four decimals of mantissa, takes over when a
// non-zero element's magnitude is 1e8 or more or below 1e-4, or the
// largest is more than 1,000 times the smallest. This is NumPy's
// array2string with precision=4 and floatmode="maxprec_equal", which
// the tests check it against. Infinities and NaNs are written as Lua 5.1
// writes them: inf, -inf, nan, -nan (NumPy writes a NaN "nan" whatever
// its sign).
//
// The package is pure: it takes a shape, a dtype and a way to fetch runs
// of elements, and asks only for the elements the text shows, so that
// printing a large device array downloads a few hundred of them, not the
// array.
package arraytext
