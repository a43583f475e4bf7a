package yubihsmsim

import (
	"encoding/binary"
	"slices"

	"github.com/signerkit/signerkit/yubihsm"
)

// Device options, as python-yubihsm's OPTION names them.
const (
	OptionForceAudit      = 0x01
	OptionCommandAudit    = 0x03
	OptionAlgorithmToggle = 0x04
)

// Capabilities of the option commands.
const (
	CapSetOption uint64 = 1 << 0x11
	CapGetOption uint64 = 1 << 0x12
)

// algorithms are what the sim supports and toggles, in the order Device
// Info lists them.
var algorithms = []byte{AlgP256, AlgAuthAES, AlgEd25519}

// options holds the device options: force audit (0 off, 1 on, 2 fixed),
// the audit setting of each command, and the algorithms turned off.
type options struct {
	forceAudit   byte
	commandAudit map[byte]byte
	disabled     map[byte]bool
}

// getOption answers Get Option: one byte, the option. Force audit is one
// byte; command audit and algorithm toggle are pairs (command or
// algorithm, value), read by python-yubihsm's get_command_audit and
// get_enabled_algorithms. Other options (FIPS mode: the sim is no FIPS
// device) get INVALID DATA, on which get_enabled_algorithms falls back to
// Device Info. It needs the get-option capability.
func (d *Device) getOption(s *session, p []byte) []byte {
	if len(p) != 1 {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if s.auth.caps&CapGetOption == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	var out []byte
	switch p[0] {
	case OptionForceAudit:
		out = []byte{d.opts.forceAudit}
	case OptionCommandAudit:
		cmds := make([]byte, 0, len(d.opts.commandAudit))
		for c := range d.opts.commandAudit {
			cmds = append(cmds, c)
		}
		slices.Sort(cmds)
		for _, c := range cmds {
			out = append(out, c, d.opts.commandAudit[c])
		}
	case OptionAlgorithmToggle:
		for _, a := range algorithms {
			on := byte(1)
			if d.opts.disabled[a] {
				on = 0
			}
			out = append(out, a, on)
		}
	default:
		return errFrame(yubihsm.CodeInvalidData)
	}
	return okFrame(CmdGetOption, out)
}

// setOption answers Set Option: the option, two bytes of length, the
// value; an empty answer. Force audit cannot leave fixed (2), nor can a
// command's audit; values past 2, and toggling an algorithm the sim does
// not have, get INVALID DATA. The sim records disabled algorithms and
// reports them, but does not refuse their use. It needs the set-option
// capability.
func (d *Device) setOption(s *session, p []byte) []byte {
	if len(p) < 3 || len(p) != 3+int(binary.BigEndian.Uint16(p[1:])) {
		return errFrame(yubihsm.CodeWrongLength)
	}
	if s.auth.caps&CapSetOption == 0 {
		return errFrame(yubihsm.CodeInsufficientPermissions)
	}
	v := p[3:]
	switch p[0] {
	case OptionForceAudit:
		if len(v) != 1 {
			return errFrame(yubihsm.CodeWrongLength)
		}
		if v[0] > 2 || d.opts.forceAudit == 2 && v[0] != 2 {
			return errFrame(yubihsm.CodeInvalidData)
		}
		d.opts.forceAudit = v[0]
	case OptionCommandAudit, OptionAlgorithmToggle:
		if len(v) == 0 || len(v)%2 != 0 {
			return errFrame(yubihsm.CodeWrongLength)
		}
		for i := 0; i < len(v); i += 2 {
			k, val := v[i], v[i+1]
			if p[0] == OptionCommandAudit {
				if val > 2 || d.opts.commandAudit[k] == 2 && val != 2 {
					return errFrame(yubihsm.CodeInvalidData)
				}
			} else if val > 1 || !slices.Contains(algorithms, k) {
				return errFrame(yubihsm.CodeInvalidData)
			}
		}
		for i := 0; i < len(v); i += 2 {
			k, val := v[i], v[i+1]
			if p[0] == OptionCommandAudit {
				if d.opts.commandAudit == nil {
					d.opts.commandAudit = map[byte]byte{}
				}
				d.opts.commandAudit[k] = val
			} else {
				if d.opts.disabled == nil {
					d.opts.disabled = map[byte]bool{}
				}
				d.opts.disabled[k] = val == 0
			}
		}
	default:
		return errFrame(yubihsm.CodeInvalidData)
	}
	return okFrame(CmdSetOption, nil)
}
