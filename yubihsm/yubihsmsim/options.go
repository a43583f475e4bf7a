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

// MaxAlgorithm is the highest algorithm code firmware 2.4.0 knows: a
// YubiHSM 2 on it reports every code from 1 (rsa-pkcs1-sha1) to 55
// (aes-kwp) in Device Info and in the algorithm toggle. Sources:
// python-yubihsm's ALGORITHM enum and libyubihsm's yh_algorithm (codes 1
// to 55, none missing); the algorithm toggle guide on docs.yubico.com,
// whose get-option output lists 0x01 to 0x37, each enabled.
const MaxAlgorithm = 55

// algorithms are the algorithm codes the sim reports in Device Info and
// offers in the algorithm toggle, ascending: only those it implements
// (P-256, the wrap keys, opaque data and certificates, AES-128
// authentication, Ed25519), so that a client that reads Device Info to
// learn what the device does is not told of RSA or other curves it would
// then be refused. A real 2.4.0 device lists 1 to MaxAlgorithm;
// python-yubihsm's device tests that want at least 47 codes fail here.
var algorithms = []byte{AlgP256, AlgAES128CCMWrap, AlgOpaqueData, AlgOpaqueX509, AlgAuthAES, AlgAES192CCMWrap, AlgAES256CCMWrap, AlgEd25519}

// Algorithms returns the algorithm codes the sim reports in Device Info
// and offers in the algorithm toggle, ascending: those it implements.
func Algorithms() []byte { return slices.Clone(algorithms) }

// auditCommands are the commands the command-audit option lists, in the
// order a 2.4 device answers Get Option for it (the Set Command Audit
// Option guide on docs.yubico.com prints that answer).
var auditCommands = []byte{
	0x01, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09, 0x08, 0x40, 0x41, 0x42, 0x43,
	0x44, 0x45, 0x46, 0x47, 0x55, 0x56, 0x48, 0x49, 0x57, 0x4a, 0x4b, 0x4c,
	0x4d, 0x67, 0x4e, 0x4f, 0x50, 0x51, 0x52, 0x53, 0x54, 0x58, 0x59, 0x5a,
	0x5b, 0x5c, 0x5d, 0x5e, 0x5f, 0x60, 0x61, 0x62, 0x63, 0x64, 0x65, 0x66,
	0x68, 0x69, 0x6a, 0x6b, 0x6c, 0x0a, 0x6d, 0x6e, 0x6f, 0x70, 0x71, 0x72,
	0x73, 0x74, 0x75, 0x76, 0x77,
}

// algorithmOff reports whether the algorithm toggle has turned alg off.
// A command that needs such an algorithm is refused with ALGORITHM
// DISABLED (0x12): libyubihsm names that code YHR_DEVICE_ALGORITHM_DISABLED
// ("an algorithm is disabled") and python-yubihsm ALGORITHM_DISABLED.
// Which commands the device checks is not published; the sim checks the
// key's algorithm where a key is made, imported or used to sign, and an
// opaque object's where one is stored.
func (d *Device) algorithmOff(alg byte) bool { return d.opts.disabled[alg] }

// options holds the device options: force audit (0 off, 1 on, 2 fixed),
// the audit setting of each command (0 off, 1 on, 2 fixed), the algorithms
// turned off, and those fixed on.
type options struct {
	forceAudit   byte
	commandAudit map[byte]byte
	disabled     map[byte]bool
	fixed        map[byte]bool
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
		for _, c := range auditCommands {
			out = append(out, c, d.opts.commandAudit[c])
		}
	case OptionAlgorithmToggle:
		for _, a := range algorithms {
			v := byte(1)
			switch {
			case d.opts.disabled[a]:
				v = 0
			case d.opts.fixed[a]:
				v = 2
			}
			out = append(out, a, v)
		}
	default:
		return errFrame(yubihsm.CodeInvalidData)
	}
	return okFrame(CmdGetOption, out)
}

// setOption answers Set Option: the option, two bytes of length, the
// value; an empty answer. Force audit cannot leave fixed (2), nor can a
// command's audit or an algorithm fixed on (2, "permanently enabled" in
// the algorithm toggle guide); values past 2, and commands or algorithms
// the device does not list, get INVALID DATA. Disabled algorithms are
// refused (algorithmOff). It needs the set-option capability.
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
				if val > 2 || !slices.Contains(auditCommands, k) || d.opts.commandAudit[k] == 2 && val != 2 {
					return errFrame(yubihsm.CodeInvalidData)
				}
			} else if val > 2 || !slices.Contains(algorithms, k) || d.opts.fixed[k] && val != 2 {
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
					d.opts.disabled, d.opts.fixed = map[byte]bool{}, map[byte]bool{}
				}
				d.opts.disabled[k] = val == 0
				d.opts.fixed[k] = val == 2
			}
		}
	default:
		return errFrame(yubihsm.CodeInvalidData)
	}
	return okFrame(CmdSetOption, nil)
}
