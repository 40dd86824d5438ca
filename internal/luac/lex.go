package luac

import (
	"strconv"
	"strings"
)

// Tokens, as Lua 5.1's llex.h numbers them: a single-character token is
// its byte, the rest follow 255 in luaX_tokens' order.
const (
	tkAnd = 257 + iota
	tkBreak
	tkDo
	tkElse
	tkElseif
	tkEnd
	tkFalse
	tkFor
	tkFunction
	tkIf
	tkIn
	tkLocal
	tkNil
	tkNot
	tkOr
	tkRepeat
	tkReturn
	tkThen
	tkTrue
	tkUntil
	tkWhile
	tkConcat
	tkDots
	tkEq
	tkGe
	tkLe
	tkNe
	tkNumber
	tkName
	tkString
	tkEOS
)

// tokenNames is luaX_tokens: how a message names each token above.
var tokenNames = [...]string{
	"and", "break", "do", "else", "elseif",
	"end", "false", "for", "function", "if",
	"in", "local", "nil", "not", "or", "repeat",
	"return", "then", "true", "until", "while",
	"..", "...", "==", ">=", "<=", "~=",
	"<number>", "<name>", "<string>", "<eof>",
}

var reserved = func() map[string]int {
	m := map[string]int{}
	for i := tkAnd; i <= tkWhile; i++ {
		m[tokenNames[i-tkAnd]] = i
	}
	return m
}()

// token2str is luaX_token2str.
func token2str(t int) string {
	if t < 256 {
		if t < 32 || t == 127 {
			return "char(" + strconv.Itoa(t) + ")"
		}
		return string([]byte{byte(t)})
	}
	return tokenNames[t-tkAnd]
}

// token is one lexical element. line is the line it starts on, which is
// what gopher-lua's trees record.
type token struct {
	t    int
	line int
	// str is a name, a string's value, or a numeral's source text.
	str string
	num float64
	// sep is a long string's level, or -1 for a quoted string, whose
	// delimiter is quote.
	sep   int
	quote byte
}

// text is what Lua 5.1 shows of the token after "near": a name or
// numeral as written, a string with its delimiters and escapes decoded
// (and cut at a zero byte, as C prints it), anything else by its name.
func (tk *token) text() string {
	switch tk.t {
	case tkName, tkNumber:
		return tk.str
	case tkString:
		var s string
		if tk.sep < 0 {
			s = string(tk.quote) + tk.str + string(tk.quote)
		} else {
			eq := strings.Repeat("=", tk.sep)
			s = "[" + eq + "[" + tk.str + "]" + eq + "]"
		}
		return cutAtZero(s)
	}
	return token2str(tk.t)
}

func cutAtZero(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// syntaxErr is a finished Lua 5.1 syntax error message; the parser panics
// with it and Parse recovers it.
type syntaxErr struct{ msg string }

// lexer is Lua 5.1's llex over a whole source in memory. line is
// ls->linenumber, the line the lexer has reached, which is what error
// messages give.
type lexer struct {
	src   []byte
	p     int
	line  int
	chunk string // the chunk's display name, as chunkid shows it
	buf   []byte
}

const eoz = -1

func (l *lexer) cur() int {
	if l.p < len(l.src) {
		return int(l.src[l.p])
	}
	return eoz
}

func isNewline(c int) bool { return c == '\n' || c == '\r' }
func isDigit(c int) bool   { return '0' <= c && c <= '9' }
func isAlpha(c int) bool   { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isAlnum(c int) bool   { return isAlpha(c) || isDigit(c) }
func isSpace(c int) bool   { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }

// errorAt raises msg at the lexer's line, followed by the token text near
// when hasNear.
func (l *lexer) errorAt(msg string, near string, hasNear bool) {
	m := l.chunk + ":" + strconv.Itoa(l.line) + ": " + msg
	if hasNear {
		m += " near '" + near + "'"
	}
	panic(&syntaxErr{m})
}

// inclinenumber skips a newline, "\r\n" or "\n\r" counting as one.
func (l *lexer) inclinenumber() {
	old := l.cur()
	l.p++
	if c := l.cur(); isNewline(c) && c != old {
		l.p++
	}
	l.line++
}

// skipSep reads '[' or ']' and the '='s after it: the level when the same
// bracket follows, else -(level)-1.
func (l *lexer) skipSep() int {
	s := l.cur()
	l.p++
	count := 0
	for l.cur() == '=' {
		l.p++
		count++
	}
	if l.cur() == s {
		return count
	}
	return -count - 1
}

// longString reads a long string or comment from its second '[' on and
// returns its content.
func (l *lexer) longString(sep int, comment bool) string {
	l.p++ // the second '['
	if isNewline(l.cur()) {
		l.inclinenumber()
	}
	l.buf = l.buf[:0]
	start := l.p // a run of plain bytes copied at once
	for {
		c := l.cur()
		switch c {
		case eoz:
			if comment {
				l.errorAt("unfinished long comment", "<eof>", true)
			}
			l.errorAt("unfinished long string", "<eof>", true)
		case '[':
			// LUA_COMPAT_LSTR: a nested [[ is an error in a level-0 string.
			if l.skipSep() == sep {
				l.p++
				if sep == 0 {
					l.errorAt("nesting of [[...]] is deprecated", "[", true)
				}
			}
		case ']':
			at := l.p
			if l.skipSep() == sep {
				l.buf = append(l.buf, l.src[start:at]...)
				l.p++
				return string(l.buf)
			}
		case '\n', '\r':
			l.buf = append(l.buf, l.src[start:l.p]...)
			l.buf = append(l.buf, '\n')
			l.inclinenumber()
			start = l.p
		default:
			l.p++
		}
	}
}

// quoted reads a string between del quotes, decoding escapes as Lua 5.1
// does.
func (l *lexer) quoted(del int) string {
	l.p++
	l.buf = l.buf[:0]
	for {
		c := l.cur()
		switch c {
		case del:
			l.p++
			return string(l.buf)
		case eoz:
			l.errorAt("unfinished string", "<eof>", true)
		case '\n', '\r':
			l.errorAt("unfinished string", cutAtZero(string(rune(del))+string(l.buf)), true)
		case '\\':
			l.p++
			var e byte
			switch l.cur() {
			case 'a':
				e = '\a'
			case 'b':
				e = '\b'
			case 'f':
				e = '\f'
			case 'n':
				e = '\n'
			case 'r':
				e = '\r'
			case 't':
				e = '\t'
			case 'v':
				e = '\v'
			case '\n', '\r':
				l.buf = append(l.buf, '\n')
				l.inclinenumber()
				continue
			case eoz:
				continue
			default:
				d := l.cur()
				if !isDigit(d) {
					l.buf = append(l.buf, byte(d))
					l.p++
					continue
				}
				v := 0
				for i := 0; i < 3 && isDigit(l.cur()); i++ {
					v = 10*v + l.cur() - '0'
					l.p++
				}
				if v > 255 {
					l.errorAt("escape sequence too large", cutAtZero(string(rune(del))+string(l.buf)), true)
				}
				l.buf = append(l.buf, byte(v))
				continue
			}
			l.buf = append(l.buf, e)
			l.p++
		default:
			l.buf = append(l.buf, byte(c))
			l.p++
		}
	}
}

// numeral reads a number as read_numeral does: digits and dots, an
// optional exponent sign, then any letters, digits and underscores, the
// whole of which must be a number.
func (l *lexer) numeral(start int, tk *token) {
	for c := l.cur(); isDigit(c) || c == '.'; c = l.cur() {
		l.p++
	}
	if c := l.cur(); c == 'e' || c == 'E' {
		l.p++
		if c := l.cur(); c == '+' || c == '-' {
			l.p++
		}
	}
	for c := l.cur(); isAlnum(c) || c == '_'; c = l.cur() {
		l.p++
	}
	text := string(l.src[start:l.p])
	v, ok := str2d(text)
	if !ok {
		l.errorAt("malformed number", text, true)
	}
	tk.t = tkNumber
	tk.str = text
	tk.num = v
}

// str2d is luaO_str2d over glibc's strtod for what numeral reads: a
// decimal number, or a hexadecimal one ("0x10", "0x1p4") as strtod takes
// it. The whole text must be the number.
func str2d(s string) (float64, bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return hexNumber(s[2:])
	}
	i, digits := 0, 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		n := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
			n++
		}
		if n == 0 {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	return parseFloat(s)
}

// hexNumber reads the digits after "0x": hexadecimal digits with an
// optional point and binary exponent, as strtod does.
func hexNumber(s string) (float64, bool) {
	i, digits := 0, 0
	for i < len(s) && isHex(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isHex(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	mant, exp := s[:i], "0"
	if i < len(s) && (s[i] == 'p' || s[i] == 'P') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && '0' <= s[k] && s[k] <= '9' {
			k++
		}
		if k > j {
			exp, i = s[i+1:k], k
		}
	}
	if i != len(s) {
		return 0, false
	}
	if strings.HasPrefix(mant, ".") {
		mant = "0" + mant
	}
	return parseFloat("0x" + mant + "p" + exp)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// parseFloat takes an overflow to infinity, as strtod does.
func parseFloat(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); !ok || ne.Err != strconv.ErrRange {
			return 0, false
		}
	}
	return v, true
}

// next reads the next token into tk, as llex does.
func (l *lexer) next(tk *token) {
	for {
		c := l.cur()
		tk.line = l.line
		switch c {
		case '\n', '\r':
			l.inclinenumber()
			continue
		case '-':
			l.p++
			if l.cur() != '-' {
				tk.t = '-'
				return
			}
			l.p++
			if l.cur() == '[' {
				if sep := l.skipSep(); sep >= 0 {
					l.longString(sep, true)
					continue
				}
			}
			for c := l.cur(); !isNewline(c) && c != eoz; c = l.cur() {
				l.p++
			}
			continue
		case '[':
			start := l.p
			sep := l.skipSep()
			if sep >= 0 {
				tk.t, tk.sep = tkString, sep
				tk.str = l.longString(sep, false)
				return
			}
			if sep == -1 {
				tk.t = '['
				return
			}
			l.errorAt("invalid long string delimiter", string(l.src[start:l.p]), true)
		case '=', '<', '>', '~':
			l.p++
			if l.cur() != '=' {
				tk.t = c
				return
			}
			l.p++
			switch c {
			case '=':
				tk.t = tkEq
			case '<':
				tk.t = tkLe
			case '>':
				tk.t = tkGe
			default:
				tk.t = tkNe
			}
			return
		case '"', '\'':
			tk.t, tk.sep, tk.quote = tkString, -1, byte(c)
			tk.str = l.quoted(c)
			return
		case '.':
			start := l.p
			l.p++
			if l.cur() == '.' {
				l.p++
				if l.cur() == '.' {
					l.p++
					tk.t = tkDots
					return
				}
				tk.t = tkConcat
				return
			}
			if !isDigit(l.cur()) {
				tk.t = '.'
				return
			}
			l.numeral(start, tk)
			return
		case eoz:
			tk.t = tkEOS
			return
		default:
			if isSpace(c) {
				l.p++
				continue
			}
			if isDigit(c) {
				start := l.p
				l.p++
				l.numeral(start, tk)
				return
			}
			if isAlpha(c) || c == '_' {
				start := l.p
				for l.p++; isAlnum(l.cur()) || l.cur() == '_'; l.p++ {
				}
				name := string(l.src[start:l.p])
				if r, ok := reserved[name]; ok {
					tk.t = r
					return
				}
				tk.t, tk.str = tkName, name
				return
			}
			l.p++
			tk.t = c
			return
		}
	}
}
