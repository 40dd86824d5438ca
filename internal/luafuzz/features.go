package luafuzz

import (
	"fmt"
	"strconv"
	"strings"
)

// calls puts calls in every position: arguments, the last and a middle
// field of a constructor, an index, a method's receiver, a condition, a
// return, parentheses that cut a call to one value.
func (g *gen) calls() []*node {
	f := g.name("f")
	out := []*node{
		mk(stmt, "local function "+f+"(a, b) return %s, %s, a end", g.any(1), g.num(1)),
		mk(stmt, "local o = {v = %s, get = function(self, d) return self.v, d end}", g.num(1)),
		mk(stmt, "local t = {"+f+"(1), "+f+"(%s), x = "+f+"(2)}", g.num(1)),
		mk(stmt, "print(dump(t), #t)"),
		mk(stmt, "print(showall("+f+"(%s, "+f+"(3))))", g.any(1)),
		mk(stmt, "print(showall(("+f+"(%s))))", g.num(1)),
		mk(stmt, "print(({"+f+"(4)})[2], select(\"#\", "+f+"(5), "+f+"(6)))"),
		mk(stmt, "print(showall(o:get(%s)), showall(({get = o.get, v = 9}):get()))", g.any(1)),
		mk(stmt, "if "+f+"(%s) then print(\"then\") else print(\"else\") end", g.any(1)),
		mk(stmt, "print(showall((function(...) return "+f+"(...) end)(%s, %s)))", g.any(1), g.any(1)),
		mk(stmt, "print(showall(pcall(string.format, \"%%s|%%s\", "+f+"(%s, 1))))", g.str(1)),
		mk(stmt, "local r = {"+f+"(7), "+f+"(8), [10] = "+f+"(9)}; print(dump(r))"),
		mk(stmt, "print(showall(pcall("+f+", %s)))", g.any(1)),
	}
	return g.some(out, 3)
}

// some keeps the first definition statements and a random selection of the
// rest, in order, so that sections differ in what they combine.
func (g *gen) some(stmts []*node, defs int) []*node {
	out := append([]*node(nil), stmts[:defs]...)
	for _, s := range stmts[defs:] {
		if g.chance(3) {
			continue
		}
		out = append(out, s)
	}
	return out
}

// genericFor iterates with iterators whose expression holds calls.
func (g *gen) genericFor() []*node {
	s := g.name("s")
	return g.some([]*node{
		mk(stmt, "local "+s+" = %s", g.str(1)),
		mk(stmt, "local mod = {iter = function(t) return ipairs(t) end, new = function() return {g = function(x) return next, x end} end}"),
		mk(stmt, "local obj = setmetatable({}, {__add = function(a, b) return {it = function(self) return ipairs({b, b * 2}) end} end})"),
		mk(stmt, "for _, v in ipairs({1, 2}) do io.write(v, \" \") end print()"),
		mk(stmt, "for i, v in mod.iter({%s, %s, 3}) do print(i, show(v)) end", g.any(1), g.num(1)),
		mk(stmt, "for k, v in mod.new().g({7}) do print(k, v) end"),
		mk(stmt, "for k, v in (obj + %s):it() do print(k, v) end", g.num(1)),
		mk(stmt, "for a in (tostring(%s) .. \"x\"):gmatch(\"%%d\") do io.write(a, \";\") end print()", g.num(1)),
		mk(stmt, "for w in ("+s+" .. \" and more\"):gmatch(\"%%a+\") do io.write(w, \"|\") end print()"),
		mk(stmt, "local acc = {} for k, v in pairs({a = 1, b = %s, [3] = %s}) do acc[#acc + 1] = show(k) .. \"=\" .. show(v) end table.sort(acc) print(table.concat(acc, \" \"))", g.any(1), g.str(1)),
		mk(stmt, "for k in pairs({1}) do local x = %s end print(\"done\")", g.any(2)),
		mk(stmt, "for i, c in ("+s+"):gmatch(\"()(.)\") do if i > 4 then break end io.write(i, c, \" \") end print()"),
		mk(stmt, "for k, v in next, {%s} do print(k, show(v)) end", g.any(1)),
	}, 3)
}

// numericFor runs numeric loops with bounds and steps from calls, strings
// and edge values.
func (g *gen) numericFor() []*node {
	return g.some([]*node{
		mk(stmt, "local function b(x) return x end"),
		mk(stmt, "for i = b(%s), b(%s) do io.write(i, \" \") if i > 20 then break end end print()", g.smallInt(), g.smallInt()),
		mk(stmt, "for i = %s, %s, b(%s) do io.write(i, \" \") if i > 20 or i < -20 then break end end print()", g.smallInt(), g.smallInt(), g.pick("1", "-1", "2", "-3", "0.5")),
		mk(stmt, "for i = 1, 3 do local j = i * 2 io.write(j, \",\") end print()"),
		mk(stmt, "for i = 0.1, 0.35, 0.1 do io.write(i, \" \") end print()"),
		mk(stmt, "for i = \"1\", \"3\" do io.write(i, \" \") end print()"),
		mk(stmt, "for i = 2^53 - 3, 2^53 - 1 do io.write(string.format(\"%%.0f \", i)) end print()"),
		mk(stmt, "for i = 3, 1 do print(\"never\") end"),
		mk(stmt, "local n = 0 for i = 1, 10 do for j = i, 10, 3 do n = n + j end end print(n)"),
	}, 1)
}

// closures capture loop variables and locals declared in loops, then run
// after the loop has moved on.
func (g *gen) closures() []*node {
	return g.some([]*node{
		mk(stmt, "local fs = {}"),
		mk(stmt, "for i = 1, 3 do fs[#fs + 1] = function() return i end end"),
		mk(stmt, "for _, v in ipairs({%s, %s}) do local w = v fs[#fs + 1] = function() return w end end", g.any(1), g.str(1)),
		mk(stmt, "local k = 0 while k < 2 do k = k + 1 local c = k * 10 fs[#fs + 1] = function() c = c + 1 return c end end"),
		mk(stmt, "local out = {} for i, f in ipairs(fs) do out[i] = show(f()) end print(table.concat(out, \" \"))"),
		mk(stmt, "local function counter() local n = %s return function() n = n + 1 return n end end local c1, c2 = counter(), counter() print(c1(), c1(), c2())", g.num(1)),
		mk(stmt, "local shared do local x = 1 shared = {function() x = x * 2 return x end, function() return x end} end print(shared[1](), shared[2]())"),
		mk(stmt, "local r = 0 repeat local z = r r = r + 1 fs[r] = function() return z end until z >= 2 print(fs[1](), fs[2](), fs[3]())"),
	}, 4)
}

// varargs passes, counts, selects and packs varargs, nil holes included.
func (g *gen) varargs() []*node {
	return g.some([]*node{
		mk(stmt, "local function va(...) return select(\"#\", ...), ... end"),
		mk(stmt, "local function mid(...) local a, b = ... return a, ..., b end"),
		mk(stmt, "print(showall(va(%s, nil, %s)))", g.any(1), g.any(1)),
		mk(stmt, "print(showall(va()))"),
		mk(stmt, "print(showall(select(%s, %s, %s, %s)))", g.pick("1", "2", "3", "-1", "-2", "'#'", "2^32 + 2", "-2^32 + 3", "'2'"), g.any(1), g.any(1), g.any(1)),
		mk(stmt, "print(showall(mid(%s, %s, nil)))", g.any(1), g.any(1)),
		mk(stmt, "local function tail(...) return select(2, ...) end print(showall(tail(%s, %s)))", g.any(1), g.any(1)),
		mk(stmt, "local function cnt(...) local t = {...} return #t, select(\"#\", ...) end print(cnt(1, 2, 3), cnt(nil, nil))"),
		mk(stmt, "print(showall(pcall(select, 0, 1)))"),
		mk(stmt, "print(showall(unpack({%s, %s, %s})))", g.any(1), g.num(1), g.str(1)),
		mk(stmt, "print(showall(unpack({1, 2, 3}, %s, %s)))", g.intArg(), g.intArg()),
		mk(stmt, "print(showall(ipairs({})({5, 6}, %s)))", g.intArg()),
		mk(stmt, "local function sum(...) local s = 0 for i = 1, select(\"#\", ...) do s = s + (select(i, ...)) end return s end print(sum(1, 2, 3.5))"),
	}, 2)
}

// andOrTargets writes assignments of and/or expressions whose left operand
// is a local, a field, a global, an upvalue or a call, to target.
func (g *gen) andOr(target string) *node {
	opnd := func() *node {
		switch g.r.IntN(6) {
		case 0:
			return lit(g.pick("t.k", "t.f", "t.n"))
		case 1:
			return lit(g.pick("G_k", "G_n"))
		case 2:
			return mk(expr, "id(%s)", g.any(0))
		case 3:
			return lit(g.pick("u", "v", target))
		default:
			return g.any(1)
		}
	}
	var e *node
	switch g.r.IntN(4) {
	case 0:
		e = mk(expr, "%s and %s", opnd(), opnd())
	case 1:
		e = mk(expr, "%s or %s", opnd(), opnd())
	case 2:
		e = mk(expr, "%s and %s or %s", opnd(), opnd(), opnd())
	default:
		e = mk(expr, "(%s or %s) and %s", opnd(), opnd(), opnd())
	}
	return mk(stmt, target+" = %s", e)
}

// andOrSetup declares the operands andOr reads.
func (g *gen) andOrSetup() []*node {
	return []*node{
		mk(stmt, "local t = {k = %s, f = false, n = %s}", g.any(1), g.num(1)),
		mk(stmt, "G_k, G_n = %s, %s", g.any(1), g.any(1)),
		mk(stmt, "local u, v = %s, %s", g.any(1), g.any(1)),
	}
}

func (g *gen) andOrLocal() []*node {
	out := g.andOrSetup()
	out = append(out, mk(stmt, "local w = %s", g.any(1)))
	for i := 0; i < 3; i++ {
		out = append(out, g.andOr("w"), mk(stmt, "print(show(w))"))
	}
	if g.chance(2) {
		out = append(out, mk(stmt, "local w2 = %s", g.andOr("w").parts[1]), mk(stmt, "print(show(w2))"))
	}
	return out
}

func (g *gen) andOrUpvalue() []*node {
	out := g.andOrSetup()
	out = append(out, mk(stmt, "local w = %s", g.any(1)))
	body := []*node{g.andOr("w"), g.andOr("u")}
	out = append(out, mk(stmt, "local function set() %s %s end", body[0], body[1]),
		mk(stmt, "set() print(show(w), show(u))"))
	return out
}

func (g *gen) andOrField() []*node {
	out := g.andOrSetup()
	out = append(out, g.andOr("t.k"), mk(stmt, "print(dump(t))"), g.andOr("t[1]"), mk(stmt, "print(dump(t))"))
	return out
}

func (g *gen) andOrGlobal() []*node {
	out := g.andOrSetup()
	out = append(out, g.andOr("G_w"), mk(stmt, "print(show(G_w))"), g.andOr("G_k"), mk(stmt, "print(show(G_k))"))
	return out
}

// andOrMulti assigns several targets at once, reading the targets
// themselves and calling functions that change them.
func (g *gen) andOrMulti() []*node {
	out := g.andOrSetup()
	a, b := g.andOr("u"), g.andOr("v")
	out = append(out,
		mk(stmt, "local x, seen = %s", g.any(1)),
		mk(stmt, "local function f() seen = x return %s end", g.any(1)),
		mk(stmt, "u, v = %s, %s", a.parts[1], b.parts[1]),
		mk(stmt, "print(show(u), show(v))"),
		mk(stmt, "x = %s, f()", g.any(1)),
		mk(stmt, "print(show(x), show(seen))"),
		mk(stmt, "t.k, x, G_k = x, t.k and %s, %s", g.any(1), g.any(1)),
		mk(stmt, "print(dump(t), show(x), show(G_k))"),
		mk(stmt, "x = (u or %s) and x", g.any(0)),
		mk(stmt, "print(show(x))"),
		mk(stmt, "u, v = v, u print(show(u), show(v))"),
	)
	return out
}

// metaIndex uses __index (table and function) and __newindex.
func (g *gen) metaIndex() []*node {
	return g.some([]*node{
		mk(stmt, "local base = {a = %s, b = %s}", g.any(1), g.num(1)),
		mk(stmt, "local log = {}"),
		mk(stmt, "local o = setmetatable({}, {__index = base, __newindex = function(t, k, v) log[#log + 1] = tostring(k) rawset(t, k, v) end})"),
		mk(stmt, "local p = setmetatable({}, {__index = function(t, k) return k .. \"!\" end})"),
		mk(stmt, "print(show(o.a), show(o.b), show(o.c), p.x, p[1])"),
		mk(stmt, "o.c = %s o.c = 2 o.a = 3 print(table.concat(log, \",\"), dump(o))", g.any(1)),
		mk(stmt, "print(show(rawget(o, \"b\")), show(getmetatable(o).__index == base))"),
		mk(stmt, "local chain = setmetatable({}, {__index = o}) print(show(chain.b), show(chain.a))"),
		mk(stmt, "print(showall(pcall(function() local q = setmetatable({}, {__index = function(t, k) error(\"no \" .. k) end}) return q.z end)))"),
		mk(stmt, "local ro = setmetatable({}, {__newindex = base}) ro.z = %s print(show(rawget(ro, \"z\")), show(base.z))", g.any(1)),
	}, 4)
}

// metaCall calls tables through __call.
func (g *gen) metaCall() []*node {
	return g.some([]*node{
		mk(stmt, "local c = setmetatable({n = %s}, {__call = function(self, a, b) return self.n, a, b end})", g.num(1)),
		mk(stmt, "print(showall(c(%s, %s)))", g.any(1), g.any(1)),
		mk(stmt, "print(showall(pcall(c, 1)))"),
		mk(stmt, "local t = {c = c} print(showall(t.c(\"x\")))"),
		mk(stmt, "print(showall(pcall(setmetatable({}, {}))))"),
	}, 1)
}

// metaArith gives tables arithmetic metamethods and mixes them with numbers
// and strings.
func (g *gen) metaArith() []*node {
	return g.some([]*node{
		mk(stmt, "local mt = {}"),
		mk(stmt, "local function V(x) return setmetatable({x = x}, mt) end"),
		mk(stmt, "local function val(o) if type(o) == \"table\" then return o.x end return o end"),
		mk(stmt, "mt.__add = function(a, b) return V(val(a) + val(b)) end mt.__sub = function(a, b) return V(val(a) - val(b)) end"),
		mk(stmt, "mt.__mul = function(a, b) return V(val(a) * val(b)) end mt.__div = function(a, b) return V(val(a) / val(b)) end"),
		mk(stmt, "mt.__mod = function(a, b) return V(val(a) %% val(b)) end mt.__pow = function(a, b) return V(val(a) ^ val(b)) end mt.__unm = function(a) return V(-val(a)) end"),
		mk(stmt, "print((V(%s) + %s).x, (%s - V(2)).x, (V(3) * V(%s)).x)", g.num(1), g.num(1), g.num(1), g.num(1)),
		mk(stmt, "print((V(7) / 2).x, (V(7) %% 3).x, (2 ^ V(10)).x, (-V(%s)).x)", g.num(1)),
		mk(stmt, "print((V(1) + \"2\").x)"),
		mk(stmt, "print(showall(pcall(function() return {} + 1 end)))"),
	}, 6)
}

// metaCompare uses __eq, __lt and __le, whose rules differ by operand type.
func (g *gen) metaCompare() []*node {
	return g.some([]*node{
		mk(stmt, "local calls = 0"),
		mk(stmt, "local mt = {__eq = function(a, b) calls = calls + 1 return a.v == b.v end, __lt = function(a, b) return a.v < b.v end, __le = function(a, b) return a.v <= b.v end}"),
		mk(stmt, "local a, b, c = setmetatable({v = %s}, mt), setmetatable({v = %s}, mt), setmetatable({v = 1}, {__eq = mt.__eq})", g.num(1), g.num(1)),
		mk(stmt, "print(a == b, a ~= b, a < b, a <= b, a > b, a >= b, calls)"),
		mk(stmt, "print(a == a, a == c, calls)"),
		mk(stmt, "print(showall(pcall(function() return a < 1 end)))"),
		mk(stmt, "print(showall(pcall(function() return a < c end)))"),
		mk(stmt, "local lt = setmetatable({v = 0}, {__lt = mt.__lt}) print(showall(pcall(function() return lt <= lt end)))"),
		mk(stmt, "print(1 == \"1\", \"a\" < \"b\", \"Z\" < \"a\", \"\" < \"a\", \"a\\0b\" < \"a\\0c\")"),
	}, 3)
}

// metaConcat concatenates tables with __concat, numbers and strings.
func (g *gen) metaConcat() []*node {
	return g.some([]*node{
		mk(stmt, "local mt = {__concat = function(a, b) local x = type(a) == \"table\" and \"T\" or tostring(a) local y = type(b) == \"table\" and \"T\" or tostring(b) return x .. y end}"),
		mk(stmt, "local o = setmetatable({}, mt)"),
		mk(stmt, "print(o .. %s, %s .. o, o .. o)", g.str(1), g.num(1)),
		mk(stmt, "print(\"a\" .. o .. \"b\" .. %s)", g.num(1)),
		mk(stmt, "print(1 .. 2, %s .. \"\", 2^63 .. \"\", -0.0 .. \"\", 1e100 .. \"|\")", g.num(1)),
		mk(stmt, "print(showall(pcall(function() return \"a\" .. {} end)))"),
		mk(stmt, "print(showall(pcall(function() return \"a\" .. nil end)))"),
	}, 2)
}

var patterns = []string{`"%a+"`, `"%d+"`, `"(%w+)=(%w+)"`, `"^%s*(.-)%s*$"`, `"[%a_][%w_]*"`, `"%f[%w]%w+"`, `"(.)%1"`,
	`"[^,]*"`, `"%p"`, `"()a()"`, `"^a"`, `"x*"`, `"%.%d"`, `"[a-c]+"`, `"%bxy"`, `"[%]]"`, `""`, `"%S+"`, `"a-b"`, `"%u%l*"`}

func (g *gen) pattern() *node { return lit(g.pick(patterns...)) }

var subjects = []string{`"hello world"`, `"key=val; k2=v2"`, `"  trim me  "`, `"a,b,,c"`, `"aabbcc"`, `"THE end."`,
	`"x1 y22 z333"`, `""`, `"abc"`, `"[x] and [y]"`, `"a.b.c"`, `"xaybxy"`}

func (g *gen) subject() *node {
	if g.chance(4) {
		return g.str(1)
	}
	return lit(g.pick(subjects...))
}

func (g *gen) stringFind() []*node {
	return []*node{
		mk(stmt, "print(showall(pcall(string.find, %s, %s, %s)))", g.subject(), g.pattern(), g.intArg()),
		mk(stmt, "print(showall(pcall(string.find, %s, %s, %s, true)))", g.subject(), g.str(0), g.intArg()),
		mk(stmt, "print(showall(pcall(string.match, %s, %s)))", g.subject(), g.pattern()),
		mk(stmt, "print(showall(pcall(string.match, %s, %s, %s)))", g.subject(), g.pattern(), g.intArg()),
		mk(stmt, "print(showall((%s):find(%s)))", g.subject(), g.pattern()),
	}
}

func (g *gen) stringGmatch() []*node {
	return []*node{
		mk(stmt, "local ok, err = pcall(function() for a, b in string.gmatch(%s, %s) do io.write(show(a), \"/\", show(b), \" \") end end) print(ok, show(err))", g.subject(), g.pattern()),
		mk(stmt, "local it = (%s):gmatch(%s) print(showall(pcall(it)))", g.subject(), g.pattern()),
		mk(stmt, "local n = 0 for w in (%s):gmatch(\"%%a\") do n = n + 1 if n > 3 then break end end print(n)", g.subject()),
	}
}

func (g *gen) repl() *node {
	switch g.r.IntN(5) {
	case 0:
		return lit(g.pick(`"<%0>"`, `"%1%1"`, `"#"`, `""`, `"%%"`, `"%2"`))
	case 1:
		return lit(`{a = "A", b = false, hello = 1, x = true}`)
	case 2:
		return lit(`function(s) if s == "a" then return nil end return s:upper() end`)
	case 3:
		return lit(`string.upper`)
	default:
		return g.str(1)
	}
}

func (g *gen) stringGsub() []*node {
	return []*node{
		mk(stmt, "print(showall(pcall(string.gsub, %s, %s, %s)))", g.subject(), g.pattern(), g.repl()),
		mk(stmt, "print(showall(pcall(string.gsub, %s, %s, %s, %s)))", g.subject(), g.pattern(), g.repl(), g.pick("0", "1", "2", "-1", "1.5", "2^32 + 2", "2^53", "0/0")),
		mk(stmt, "print(showall((%s):gsub(\"%%w+\", \"%%0 %%0\")))", g.subject()),
	}
}

var formats = []string{`"%d"`, `"%5.2f"`, `"%g"`, `"%x"`, `"%X"`, `"%o"`, `"%e"`, `"%q"`, `"%s"`, `"%10s|"`, `"%-5d|"`,
	`"%c"`, `"%i"`, `"%u"`, `"%%"`, `"%.3s"`, `"%+d"`, `"% d"`, `"%#x"`, `"%05.1f"`, `"%.14g"`, `"%5.1s|"`}

func (g *gen) stringFormat() []*node {
	var out []*node
	for i := 0; i < 4; i++ {
		var arg *node
		if g.chance(2) {
			arg = g.num(1)
		} else {
			arg = g.any(1)
		}
		out = append(out, mk(stmt, "print(showall(pcall(string.format, %s, %s)))", g.pick(formats...), arg))
	}
	out = append(out, mk(stmt, "print(string.format(\"%%s %%d %%q\", %s, 3, \"a\\nb\\\"\\0\"))", g.str(1)))
	return out
}

func (g *gen) stringMisc() []*node {
	return g.some([]*node{
		mk(stmt, "local s = %s", g.subject()),
		mk(stmt, "print(showall(pcall(string.sub, s, %s, %s)))", g.intArg(), g.intArg()),
		mk(stmt, "print(showall(pcall(string.byte, s, %s, %s)))", g.smallInt(), g.smallInt()),
		mk(stmt, "print(showall(pcall(string.char, %s, %s)))", g.pick("65", "0", "255", "256", "-1", "97.0", "2^32 + 65", "0/0"), g.pick("66", "1", "122")),
		mk(stmt, "print(showall(pcall(string.rep, %s, %s)))", g.str(0), g.pick("0", "1", "3", "-1", "2.7", "2^32 + 2", "-2^32 + 3", "2^53", "1/0")),
		mk(stmt, "print(#s, s:len(), s:lower(), s:upper(), s:reverse())"),
		mk(stmt, "print((\"x\"):rep(3), (%s):sub(2), (\"abc\"):byte(-1))", g.str(1)),
		mk(stmt, "print(showall(pcall(string.len, %s)))", g.any(0)),
		mk(stmt, "print(tostring(%s), tostring(%s), tonumber(%s), tonumber(%s, %s))", g.any(1), g.num(1), g.str(1), g.pick(`"ff"`, `"10"`, `"z"`, `"777"`, `"1e1"`), g.pick("16", "2", "36", "8")),
	}, 1)
}

// arith prints arithmetic of random operands, edge values included.
func (g *gen) arith() []*node {
	var out []*node
	for i := 0; i < 3; i++ {
		_, s := g.localNum()
		out = append(out, s)
	}
	for i := 0; i < 4; i++ {
		out = append(out, pcallPrint(g.num(3)))
	}
	return out
}

var edgeNums = []string{"0", "-id(0)", "1", "-1", "3", "-3", "0.1", "0.01", "2^53", "2^900", "2^255", "1e308", "-1e308",
	"(1/0)", "(-1/0)", "(0/0)", "5.5", "-5.5", "10", "2^-1074", "7", "0.3"}

func (g *gen) edge() *node { return lit(g.pick(edgeNums...)) }

func (g *gen) arithMod() []*node {
	var out []*node
	for i := 0; i < 4; i++ {
		out = append(out, mk(stmt, "print(%s %% %s)", g.edge(), g.edge()))
	}
	out = append(out, mk(stmt, "local a, b = %s, %s print(a %% b, a - math.floor(a / b) * b, math.fmod(a, b))", g.edge(), g.edge()))
	return out
}

func (g *gen) arithPow() []*node {
	var out []*node
	for i := 0; i < 4; i++ {
		out = append(out, mk(stmt, "print(%s ^ %s)", g.pick("2", "-8", "10", "0.5", "3", "-2", "7", "1.5", "0", "-id(0)"),
			g.pick("2.5", "(1/3)", "0.5", "-1", "53", "-1074", "0.1", "3", "1e3", "-0.5", "(1/0)", "0")))
	}
	out = append(out, mk(stmt, "print(math.sqrt(2), math.exp(1), math.log(10), math.log10(2), math.sin(1), math.pow(2, 0.5))"))
	return out
}

// mathFunctions are the math library's functions of one number that C
// computes.
var mathFunctions = []string{"sin", "cos", "tan", "exp", "log", "log10", "atan", "asin", "acos", "sinh", "cosh", "tanh", "sqrt"}

// arithMath applies them, and atan2, to edge values, printed to the last
// digit: at these arguments glibc rounds each to the nearest double, and
// so must glua.
func (g *gen) arithMath() []*node {
	var out []*node
	for i := 0; i < 3; i++ {
		out = append(out, mk(stmt, "print(string.format(\"%%.17g %%.17g\", math.%s(%s), math.atan2(%s, %s)))",
			g.pick(mathFunctions...), g.edge(), g.edge(), g.edge()))
	}
	return out
}

// arithZero follows -0, NaN and infinities through arithmetic and printing.
func (g *gen) arithZero() []*node {
	return g.some([]*node{
		mk(stmt, "local z, m = 0, -1"),
		mk(stmt, "print(z * m, 1 / (z * m), -z, z / -1, 0 * -1)"),
		mk(stmt, "local nan = 0 / 0 print(nan ~= nan, nan == nan, 5 %% 0, (-8) ^ (1 / 3), math.huge - math.huge)"),
		mk(stmt, "print(math.huge, -math.huge, 2^1024, math.floor(-0.5), math.ceil(-0.5), string.format(\"%%.1f\", -0.0))"),
		mk(stmt, "print(math.max(%s, %s), math.min(%s, 0), math.abs(-0), math.fmod(-6, 4), math.fmod(6, -4))", g.edge(), g.edge(), g.edge()),
		mk(stmt, "print(2^53, 2^53 + 1, 2^63, -2^63, 1e15, 1e16, 123456789012345, 0.1 + 0.2)"),
		mk(stmt, "print(math.floor(2^53 + 0.5), math.modf(-3.7), math.modf(1/0), math.frexp(%s), math.ldexp(1, 60))", g.edge()),
		mk(stmt, "print(tostring(1/0), tostring(-1/0), tostring(0/0) == tostring(0/0), -(0/0) ~= -(0/0))"),
	}, 1)
}

// errors raises errors of every kind, with levels, and catches them.
func (g *gen) errors() []*node {
	return g.some([]*node{
		mk(stmt, "local function lvl(n) error(\"boom\", n) end"),
		mk(stmt, "local function outer(n) lvl(n) end"),
		mk(stmt, "print(showall(pcall(outer, %s)))", g.pick("0", "1", "2", "3")),
		mk(stmt, "print(showall(pcall(error)))"),
		mk(stmt, "print(showall(pcall(error, %s)))", g.any(1)),
		mk(stmt, "print(showall(pcall(error, {code = %s})))", g.num(1)),
		mk(stmt, "local ok, e = pcall(error, setmetatable({}, {__tostring = function() return \"custom\" end})) print(ok, tostring(e))"),
		mk(stmt, "print(showall(pcall(pcall, error, %s)))", g.str(1)),
		mk(stmt, "print(showall(xpcall(function() error(%s) end, function(m) return \"handled: \" .. tostring(m) end)))", g.any(1)),
		mk(stmt, "print(showall(pcall(function() local x = nil; return x.y end)))"),
		mk(stmt, "print(showall(pcall(function() return #nil end)))"),
		mk(stmt, "print(showall(pcall(function() return nil .. \"a\" end)))"),
		mk(stmt, "print(showall(pcall(function() undefined_fn() end)))"),
		mk(stmt, "print(showall(pcall(function() local t = {} t[nil] = 1 end)))"),
		mk(stmt, "print(showall(pcall(string.rep)))"),
		mk(stmt, "print(showall(pcall(setmetatable, 1, {})))"),
		mk(stmt, "print(showall(pcall(error, \"lvl2\", 2)))"),
		mk(stmt, "print(select(\"#\", pcall(error)))"),
		mk(stmt, "print(showall(pcall(assert, %s, \"assert msg\")))", g.any(1)),
		mk(stmt, "print(showall(pcall(assert, false)))"),
	}, 2)
}

func (g *gen) coroutines() []*node {
	return g.some([]*node{
		mk(stmt, "local co = coroutine.create(function(a, b) local c = coroutine.yield(a + b) local d, e = coroutine.yield(c * 2) return d, e, \"end\" end)"),
		mk(stmt, "print(showall(coroutine.resume(co, %s, 2)))", g.num(1)),
		mk(stmt, "print(coroutine.status(co), showall(coroutine.resume(co, %s)))", g.num(1)),
		mk(stmt, "print(showall(coroutine.resume(co, \"x\", %s)))", g.any(1)),
		mk(stmt, "print(coroutine.status(co), showall(coroutine.resume(co)))"),
		mk(stmt, "local gen = coroutine.wrap(function() for i = 1, 3 do coroutine.yield(i) end return \"done\" end) print(gen(), gen(), gen(), gen()) print(showall(pcall(gen)))"),
		mk(stmt, "local bad = coroutine.create(function() error(%s) end) print(showall(coroutine.resume(bad))) print(coroutine.status(bad), type(coroutine.running()))", g.any(1)),
		mk(stmt, "local w = coroutine.wrap(function(...) local n = select(\"#\", ...) while true do n = n + select(\"#\", coroutine.yield(n)) end end) print(w(1, 2), w(), w(nil, nil, nil))"),
		mk(stmt, "print(showall(pcall(coroutine.yield, 1)))"),
		// yields from tail calls and from what instructions call
		mk(stmt, "local tc = coroutine.wrap(function(x) local function f(y) return coroutine.yield(y) end return f(x) end) print(showall(tc(%s)), showall(tc(%s, 2)))", g.any(1), g.any(1)),
		mk(stmt, "local mm = coroutine.create(function() local t = setmetatable({}, {%s = function() return coroutine.yield(1) end}) return %s end) print(showall(coroutine.resume(mm))) print(showall(coroutine.resume(mm, 5)))",
			g.pick("__index", "__add", "__call", "__concat", "__unm", "__eq", "__lt", "__le"), g.pick("t.k", "t + 1", "t(2)", "t .. \"s\"", "-t", "t == setmetatable({}, getmetatable(t))", "t < t", "t <= t")),
		mk(stmt, "local it = coroutine.create(function() for k in function() return coroutine.yield(\"i\") end do return k end end) print(showall(coroutine.resume(it))) print(showall(coroutine.resume(it, 3)))"),
	}, 1)
}

// manyLocals writes a function with up to 190 locals, the last of them used
// in a call of several arguments (register pressure).
func (g *gen) manyLocals() []*node {
	n := 20 + g.r.IntN(171)
	var b strings.Builder
	b.WriteString("local function big(p)\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  local l%d = p + %d\n", i, i)
	}
	fmt.Fprintf(&b, "  local s = l0 + l%d\n", n-1)
	fmt.Fprintf(&b, "  return s, math.max(l0, l1, l2, l3, l4, l%d), select(\"#\", l0, l1, l2, l3, l4, l5)\nend", n-1)
	return []*node{
		{kind: text, parts: []any{b.String()}},
		mk(stmt, "print(big(%s))", g.num(1)),
	}
}

// manyArgs calls functions with up to 240 arguments.
func (g *gen) manyArgs() []*node {
	n := 50 + g.r.IntN(191)
	args := make([]string, n)
	for i := range args {
		args[i] = strconv.Itoa(i)
	}
	params := make([]string, min(n, 150))
	for i := range params {
		params[i] = "a" + strconv.Itoa(i)
	}
	return []*node{
		mk(stmt, "local function count(...) return select(\"#\", ...), (select(-1, ...)) end"),
		mk(stmt, "print(count("+strings.Join(args, ", ")+"))"),
		mk(stmt, "local function named("+strings.Join(params, ", ")+") return a0 + "+params[len(params)-1]+" end"),
		mk(stmt, "print(named("+strings.Join(args, ", ")+"))"),
		mk(stmt, "print(#{"+strings.Join(args, ", ")+"})"),
	}
}

// manyLiterals builds constructors and functions with hundreds of
// constants, sometimes past 4,096 in one function.
func (g *gen) manyLiterals() []*node {
	n := 310 + g.r.IntN(400)
	if g.chance(8) {
		n = 4100 + g.r.IntN(200)
	}
	var b strings.Builder
	b.WriteString("local function lits(lv)\n  local t = {")
	for i := 0; i < n; i++ {
		if i%3 == 0 {
			fmt.Fprintf(&b, "%q, ", "k"+strconv.Itoa(i))
		} else {
			fmt.Fprintf(&b, "%d.5, ", i)
		}
		if i%20 == 19 {
			b.WriteString("\n")
		}
	}
	b.WriteString("}\n")
	b.WriteString("  if lv then error(\"lits\", lv) end\n")
	b.WriteString("  return #t, t[1], t[#t], t[2] + t[5]\nend")
	return []*node{
		{kind: text, parts: []any{b.String()}},
		mk(stmt, "print(lits())"),
		mk(stmt, "print(showall(pcall(lits, %s)))", g.pick("1", "2")),
		mk(stmt, "local function callsLits() lits(2) end print(showall(pcall(callsLits)))"),
	}
}

// coercion converts between strings and numbers in arithmetic,
// concatenation and tonumber.
func (g *gen) coercion() []*node {
	return g.some([]*node{
		mk(stmt, "print(showall(pcall(function() return %s + %s end)))", g.str(0), g.num(1)),
		mk(stmt, "print(showall(pcall(function() return %s * %s end)))", g.str(0), g.str(0)),
		mk(stmt, "print(\"10\" + 1, \"0x10\" + 0, \" 5 \" * 2, \"1e2\" + 0, -\"2\", \"3\" ^ 2, \"7\" %% \"4\")"),
		mk(stmt, "print(10 .. \"\", 1.5 .. \"|\", -0.0 .. \"\", %s .. \"\")", g.num(1)),
		mk(stmt, "print(tonumber(\"0x\"), tonumber(\"1e\"), tonumber(\" 12 \"), tonumber(\"12a\"), tonumber(\"\"), tonumber(\"0x1p4\"), tonumber(\".5\"), tonumber(\"5.\"))"),
		mk(stmt, "print(tonumber(%s), tonumber(%s))", g.str(1), g.any(1)),
		mk(stmt, "print(\"10\" == 10, \"abc\" < \"abd\", #(\"x\" .. 12))"),
		mk(stmt, "print(showall(pcall(function() return \"10\" < 5 end)))"),
		mk(stmt, "print(math.floor(\"3.7\"), string.rep(5, 2), (\"5\"):rep(2), string.len(123))"),
	}, 0)
}

func (g *gen) loops() []*node {
	return g.some([]*node{
		mk(stmt, "local i, acc = 0, {}"),
		mk(stmt, "while i < %s do i = i + 1 if i %% 3 == 0 then break end acc[#acc + 1] = i end print(i, table.concat(acc, \",\"))", g.pick("5", "10", "0", "2")),
		mk(stmt, "repeat i = i + 1 local done = i >= 6 until done print(i)"),
		mk(stmt, "local n = 0 repeat n = n + 1 if n == 2 then break end until false print(n)"),
		mk(stmt, "local c = 0 while (true or c) == true and c < 3 do c = c + 1 end print(c)"),
		mk(stmt, "local k = 0 while k < 4 do k = k + 1 if (nil or false) == nil then end end print(k)"),
		mk(stmt, "for x = 1, 3 do local y = 0 while true do y = y + 1 if y >= x then break end end io.write(y, \" \") end print()"),
		mk(stmt, "local w = %s while w do w = nil end print(show(w))", g.any(1)),
		mk(stmt, "local m = 0 for a = 1, 3 do for b = 1, 3 do if b > a then break end m = m + 1 end end print(m)"),
	}, 1)
}

func (g *gen) recursion() []*node {
	return g.some([]*node{
		mk(stmt, "local function fact(n) if n <= 1 then return 1 end return n * fact(n - 1) end"),
		mk(stmt, "local function loop(n, acc) if n == 0 then return acc end return loop(n - 1, acc + n) end"),
		mk(stmt, "print(fact(%s), fact(20), fact(25))", g.pick("5", "10", "0", "1")),
		mk(stmt, "print(loop(%s, 0))", g.pick("10", "1000", "50000")),
		mk(stmt, "local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end print(fib(%s))", g.pick("10", "15", "1")),
		mk(stmt, "local function outer(x) local function mid(y) local function inner(z) return x + y + z end return inner(y * 2) end return mid(x + 1) end print(outer(%s))", g.num(1)),
		mk(stmt, "local function ev(n) if n == 0 then return true end return (function(m) return not ev(m) end)(n - 1) end print(ev(7), ev(10))"),
		mk(stmt, "local function tc(...) if select(\"#\", ...) > 3 then return ... end return tc(1, ...) end print(tc())"),
		mk(stmt, "print(showall(pcall(function() local function inf(n) return 1 + inf(n + 1) end return inf(1) end)) :match(\"stack overflow\") ~= nil)"),
	}, 2)
}

// tables uses the table library and the length operator.
func (g *gen) tables() []*node {
	return g.some([]*node{
		mk(stmt, "local t = {%s, %s, %s}", g.num(1), g.num(1), g.num(1)),
		mk(stmt, "table.insert(t, %s) table.insert(t, 1, %s) print(dump(t), #t)", g.num(1), g.num(1)),
		mk(stmt, "print(showall(table.remove(t)), showall(table.remove(t, 1)), dump(t))"),
		mk(stmt, "print(select(\"#\", table.remove({})), showall(table.remove({}, 1)))"),
		// positions that land in -1 .. 4 as Lua 5.1 reads them: past the
		// end, # of a table with holes is a border of Lua 5.1's layout
		mk(stmt, "local u = {1, 2, 3} table.insert(u, %s, 9) print(showall(u[-1], u[0], u[1], u[2], u[3], u[4], table.remove(u, %s)))", g.tablePos(), g.tablePos()),
		mk(stmt, "print(showall(pcall(table.concat, {1, 2, 3}, \",\", %s, %s)), math.ldexp(1.5, %s))", g.intArg(), g.intArg(), g.intArg()),
		mk(stmt, "print(table.concat({1, \"a\", 2.5}, %s), table.concat({}, \"x\"), table.concat({1, 2, 3}, \"-\", 2, 3))", g.str(0)),
		mk(stmt, "print(showall(pcall(table.concat, {1, {}, 3})))"),
		mk(stmt, "local s = {5, 2, 8, 1, 9, 3} table.sort(s) print(table.concat(s, \" \")) table.sort(s, function(a, b) return a > b end) print(table.concat(s, \" \"))"),
		mk(stmt, "local w = {\"b\", \"a\", \"B\", \"aa\"} table.sort(w) print(table.concat(w, \" \"))"),
		mk(stmt, "print(#setmetatable({}, {__len = function() return 9 end}), table.maxn({1, nil, 3, [10] = 1}))"),
		mk(stmt, "print(showall(pcall(table.insert, {}, 1, 2, 3)))"),
		mk(stmt, "print(showall(pcall(next, {}, \"nokey\")))"),
		mk(stmt, "print(showall(next({})), rawlen == nil, rawequal(t, t))"),
		mk(stmt, "local big = {} for i = 1, 100 do big[i] = i * i end print(#big, big[100]) for i = 100, 51, -1 do big[i] = nil end print(#big)"),
	}, 1)
}

// debugLevels reads the stack with debug.getinfo, getlocal and getfenv from
// functions reached in each way Lua 5.1 names (global, local, upvalue,
// field, method), through tail calls, pcall and a coroutine, at levels up
// to past the bottom of the stack.
func (g *gen) debugLevels() []*node {
	level := func() string { return g.pick("0", "1", "2", "3", "4", "5", "9") }
	return g.some([]*node{
		mk(stmt, `local function probe(k) local i = debug.getinfo(k, "nSlu") if not i then return "none" end return table.concat({tostring(i.name), i.namewhat, i.what, i.short_src, i.currentline, i.linedefined, i.lastlinedefined, i.nups}, ",") end`),
		mk(stmt, "local up = probe"),
		mk(stmt, "print(probe(%s))", level()),
		mk(stmt, "fuzzprobe = function(k) return (probe(k)) end print(fuzzprobe(%s))", level()),
		mk(stmt, "local function viaUpvalue(k) return (up(k)) end print(viaUpvalue(%s))", level()),
		mk(stmt, "local function viaTail(k) return probe(k) end print(viaTail(%s))", level()),
		mk(stmt, "local t = {f = function(k) return (probe(k)) end} print(t.f(%s), t[\"f\"](%s))", level(), level()),
		mk(stmt, "local o = {} function o:m(k) return (probe(k)) end print(o:m(%s))", level()),
		mk(stmt, "print(showall(pcall(probe, %s)))", level()),
		mk(stmt, "print(showall(coroutine.resume(coroutine.create(function(k) return (probe(k)) end), %s)))", level()),
		// Only Lua functions' levels: Lua 5.1 shows a C function's stack
		// slots as "(*temporary)", which gopher-lua keeps elsewhere.
		mk(stmt, "local function lv(k) local a, b = 1, \"x\" return showall(debug.getlocal(k, 1)), showall(debug.getlocal(k, 2)) end local function w(k) local z = 7 return (lv(k)) end print(w(%s))", g.pick("1", "2", "3")),
		mk(stmt, "print(showall(pcall(debug.getlocal, %s, 1)))", g.pick("40", "-1")),
		mk(stmt, "print(showall(pcall(function(k) return getfenv(k) == _G end, %s)))", level()),
		mk(stmt, "local function tl(k) return debug.getinfo(k, \"S\").what end local function caller(k) return tl(k) end print(showall(pcall(caller, %s)))", level()),
	}, 2)
}

// hooks runs a section of another feature under a line hook, a count hook
// or both, and prints each event with the line of the function it stopped
// (the hook's own instructions count toward the next count event, as in
// Lua 5.1): the trace checks each instruction's line and how many
// instructions each construct runs.
func (g *gen) hooks() []*node {
	inner := hookable[g.r.IntN(len(hookable))]
	mask, count := g.pick("l", "l", ""), g.pick("0", "1", "3", "7")
	if mask == "" && count == "0" {
		count = "2"
	}
	return []*node{
		mk(stmt, `local trace = {} debug.sethook(function(e, l) if #trace < 2000 then trace[#trace + 1] = e:sub(1, 1) .. (l or debug.getinfo(2, "l").currentline) end end, "%s", %s)`, mask, count),
		mk(stmt, "do\n%s end", block(inner(g))),
		mk(stmt, `debug.sethook() print(table.concat(trace, " "))`),
	}
}

// hookable are the features a hooks section runs, every one but itself.
var hookable []func(*gen) []*node

func init() {
	for _, f := range features {
		if f.name != "hooks" {
			hookable = append(hookable, f.write)
		}
	}
}
