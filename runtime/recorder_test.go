package runtime

import "testing"

func TestAStoppedRecordingStaysTheLatestUntilTheNextStarts(t *testing.T) {
	var m memoryRecording
	if m.active() != nil || m.latest() != nil {
		t.Fatal("a runtime that never recorded has a recording")
	}
	first := &memoryRecord{}
	m.start(first)
	if m.active() != first || m.latest() != first {
		t.Fatal("a started recording is not the one under way and the latest")
	}
	m.stop()
	if m.active() != nil {
		t.Fatal("a stopped recording is still under way")
	}
	if m.latest() != first {
		t.Fatal("stopping lost the recording MemoryProfile draws")
	}
	second := &memoryRecord{}
	m.start(second)
	if m.active() != second || m.latest() != second {
		t.Fatal("a second recording did not replace the first as the latest")
	}
}
