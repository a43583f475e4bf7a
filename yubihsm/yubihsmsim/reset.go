package yubihsmsim

import (
	"github.com/signerkit/signerkit/yubihsm"
)

// Reset Device, after Yubico's command page and python-yubihsm's
// AuthSession.reset_device: the device answers with no data, then erases
// every object, restores the factory authentication key (id 1, password
// "password"), clears its options and its log, and reboots, which ends
// every session. python-yubihsm takes a dropped connection as a good
// reset too; the sim always answers first.

// CmdResetDevice is Reset Device; CapResetDevice the capability it needs.
const (
	CmdResetDevice        = 0x08
	CapResetDevice uint64 = 1 << 0x1c
)

// resetDevice answers Reset Device (no data) and schedules the reset for
// after the answer is sealed under the session's keys.
func (d *Device) resetDevice(s *session, p []byte) []byte {
	if len(p) != 0 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if s.auth.caps&CapResetDevice == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	d.resetting = true
	return okFrame(CmdResetDevice, nil)
}

// factoryReset erases the device as Reset Device does, after its answer
// has gone out: objects, sessions, options and log, with the factory
// authentication key back.
func (d *Device) factoryReset() {
	d.resetting = false
	for i := range d.sessions {
		d.dropSession(i)
	}
	for _, o := range d.objects {
		wipeObject(o)
	}
	d.objects = map[objKey]*object{}
	d.opts = options{}
	d.resetLog()
	k := defaultAuthKey()
	o := &object{id: 1, typ: TypeAuthKey, alg: AlgAuthAES, caps: CapAll, delegated: CapAll, domains: 0xffff, origin: 2, enc: k[0], mac: k[1]}
	copy(o.label[:], "DEFAULT AUTHKEY CHANGE THIS ASAP")
	d.objects[objKey{TypeAuthKey, 1}] = o
}

// wipeObject clears the secret material the sim can reach in place.
func wipeObject(o *object) {
	clear(o.enc[:])
	clear(o.mac[:])
	clear(o.data)
	clear(o.wrap)
	if o.ed != nil {
		*o.ed = edKey{}
	}
	if o.k1 != nil {
		o.k1.Zero()
	}
}
