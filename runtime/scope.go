package runtime

// scope records the buffers allocated while it is the innermost one.
type scope struct {
	buffers []*buffer
}

// Scope runs fn and then frees every array allocated during fn except those
// fn returns in keep (and whatever views them); kept arrays pass to the
// enclosing scope, if any. The arrays are freed however fn ends: normally,
// with an error, or by a panic (a Lua error unwinds through here as one).
func (rt *Runtime) Scope(fn func() (keep []*Array, err error)) (err error) {
	if err := rt.usable(); err != nil {
		return err
	}
	if fn == nil {
		return badGoArgument("Scope", "fn is nil")
	}
	s := &scope{}
	rt.mu.Lock()
	rt.mem.pushScope(s)
	rt.mu.Unlock()
	var keep []*Array
	defer func() {
		rt.mu.Lock()
		rt.mem.popScope()
		rt.mu.Unlock()
		rt.endScope(s, keep)
	}()
	keep, err = fn()
	return err
}

func (rt *Runtime) endScope(s *scope, keep []*Array) {
	kept := make(map[*buffer]bool, len(keep))
	for _, a := range keep {
		if a != nil {
			kept[a.buf] = true
		}
	}
	var pass []*buffer
	for _, b := range s.buffers {
		if kept[b] {
			pass = append(pass, b)
			continue
		}
		rt.freeExplicitly(b)
	}
	if len(pass) == 0 {
		return
	}
	rt.mu.Lock()
	rt.mem.passToScope(pass)
	rt.mu.Unlock()
}
