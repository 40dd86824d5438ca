package runtime

// memoryRecording holds the runtime's memory recordings (RecordMemory):
// the one under way, if any, and the latest, under way or stopped, which
// MemoryProfile draws. An allocation or free asks active for the
// recording to add its event to, so that while nothing is recorded it
// costs one branch.
//
// It has no lock of its own: as before it became a type, only the
// runtime's goroutine touches it.
type memoryRecording struct {
	current, last *memoryRecord
}

// active is the recording under way, nil when none is.
func (m *memoryRecording) active() *memoryRecord { return m.current }

// latest is the latest recording, under way or stopped, nil before the
// first.
func (m *memoryRecording) latest() *memoryRecord { return m.last }

// start makes rec the recording under way and the latest.
func (m *memoryRecording) start(rec *memoryRecord) { m.current, m.last = rec, rec }

// stop ends the recording under way; the latest stays for MemoryProfile.
func (m *memoryRecording) stop() { m.current = nil }
