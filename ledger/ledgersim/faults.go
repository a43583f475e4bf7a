package ledgersim

import (
	"fmt"

	"github.com/signerkit/signerkit/ledger"
)

// Fault is a failure the device injects into its next exchange; see
// Device.Inject.
type Fault uint8

const (
	// FaultUnplug unplugs the device after it received the APDU and
	// before it answers (a cable pulled mid-exchange).
	FaultUnplug Fault = iota + 1
	// FaultHang loses the APDU: the device never answers it.
	FaultHang
	// FaultGarbled answers with every reply byte corrupted (XOR 0x5A), so
	// channel, tag and sequence no longer fit. HID face only.
	FaultGarbled
	// FaultShort answers with reports cut to 4 bytes. HID face only.
	FaultShort
	// FaultWrongSequence answers with sequence numbers off by one. HID
	// face only.
	FaultWrongSequence
	// FaultWrongChannel answers on channel 0x0202. HID face only.
	FaultWrongChannel
	// FaultStale leaves the reply to the previous exchange queued on the
	// HID face, as a late packet would be, before the next exchange
	// begins. Inject queues it at once. HID face only.
	FaultStale
)

// String names the fault as tests and logs show it (unplug, hang, …).
func (f Fault) String() string {
	switch f {
	case FaultUnplug:
		return "unplug"
	case FaultHang:
		return "hang"
	case FaultGarbled:
		return "garbled"
	case FaultShort:
		return "short"
	case FaultWrongSequence:
		return "wrong-sequence"
	case FaultWrongChannel:
		return "wrong-channel"
	case FaultStale:
		return "stale"
	}
	return fmt.Sprintf("Fault(%d)", uint8(f))
}

// Faults lists every fault.
func Faults() []Fault {
	return []Fault{FaultUnplug, FaultHang, FaultGarbled, FaultShort, FaultWrongSequence, FaultWrongChannel, FaultStale}
}

// Inject arms f for the next APDU the device receives in full, on any face
// and whether or not it is hung (FaultStale acts at once). Faults queue in
// the order injected, one per APDU.
func (d *Device) Inject(f Fault) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f == FaultStale {
		for p := range d.ports {
			p.queueLocked(d.lastReply, ledger.Channel, 0)
		}
		return
	}
	d.faults = append(d.faults, f)
}

// nextFault takes the next armed fault, or 0. The caller holds d.mu.
func (d *Device) nextFault() Fault {
	if len(d.faults) == 0 {
		return 0
	}
	f := d.faults[0]
	d.faults = d.faults[1:]
	return f
}
