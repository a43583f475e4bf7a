package yubihsmsim

import (
	"bytes"
	"encoding/binary"
	"testing"
)

// FuzzWrapCommands feeds arbitrary payloads to Put and Generate Wrap Key,
// Export Wrapped and Import Wrapped on a device holding a wrap key and an
// exportable key: each answers an error frame or its own response, never
// panics, and an Import Wrapped that succeeds stores an object that
// exports again.
func FuzzWrapCommands(f *testing.F) {
	wrapTemplate := func(id uint16, alg byte, key []byte) []byte {
		p := binary.BigEndian.AppendUint16(nil, id)
		p = append(p, make([]byte, 40)...)
		p = binary.BigEndian.AppendUint16(p, 1)
		p = binary.BigEndian.AppendUint64(p, CapExportWrapped|CapImportWrapped)
		p = append(p, alg)
		p = binary.BigEndian.AppendUint64(p, CapAll)
		return append(p, key...)
	}
	f.Add(byte(CmdPutWrapKey), wrapTemplate(5, AlgAES128CCMWrap, make([]byte, 16)))
	f.Add(byte(CmdGenerateWrapKey), wrapTemplate(0, AlgAES256CCMWrap, nil))
	f.Add(byte(CmdExportWrapped), []byte{0, 1, TypeAsymmetric, 0, 2})
	f.Add(byte(CmdImportWrapped), append([]byte{0, 1}, make([]byte, 13+16+59+96)...))
	f.Fuzz(func(t *testing.T, cmd byte, p []byte) {
		d := New(Config{Rand: bytes.NewReader(bytes.Repeat([]byte{9}, 1<<12))})
		s := &session{auth: d.objects[objKey{TypeAuthKey, 1}]}
		if resp := d.putWrapKey(s, CmdPutWrapKey, wrapTemplate(1, AlgAES256CCMWrap, make([]byte, 32))); resp[0] != CmdPutWrapKey|0x80 {
			t.Fatalf("put wrap key: %x", resp)
		}
		key := make([]byte, 53)
		binary.BigEndian.PutUint16(key, 2)
		binary.BigEndian.PutUint16(key[42:], 1)
		binary.BigEndian.PutUint64(key[44:], CapSignEdDSA|CapExportableUnderWrap)
		key[52] = AlgEd25519
		if resp := d.storeKey(s, CmdGenerateAsymKey, key); resp[0] != CmdGenerateAsymKey|0x80 {
			t.Fatalf("generate: %x", resp)
		}
		var resp []byte
		switch cmd % 4 {
		case 0:
			resp = d.putWrapKey(s, CmdPutWrapKey, p)
		case 1:
			resp = d.putWrapKey(s, CmdGenerateWrapKey, p)
		case 2:
			resp = d.exportWrapped(s, p)
		default:
			resp = d.importWrapped(s, p)
			if resp[0] == CmdImportWrapped|0x80 {
				typ, id := resp[3], binary.BigEndian.Uint16(resp[4:])
				o := d.objects[objKey{typ, id}]
				if o == nil || o.origin&originWrapped == 0 {
					t.Fatalf("imported object %d/%04x: %+v", typ, id, o)
				}
			}
		}
		if len(resp) < 3 || (resp[0] != CmdError && resp[0]&0x80 == 0) {
			t.Fatalf("response %x", resp)
		}
	})
}

// FuzzParseWrapped decodes arbitrary opened objects: a decoded one seals
// back to the same bytes, but for the origin's wrapped bit.
func FuzzParseWrapped(f *testing.F) {
	d := New(Config{})
	o := &object{typ: TypeAsymmetric, id: 3, alg: AlgEd25519, domains: 1, caps: CapSignEdDSA, ed: edKeyFromSeed(make([]byte, 32)), origin: 1}
	f.Add(wrapPlain(AlgAES128CCMWrap, o))
	f.Add(wrapPlain(AlgAES128CCMWrap, d.objects[objKey{TypeAuthKey, 1}]))
	f.Add([]byte{AlgAES128CCMWrap})
	f.Fuzz(func(t *testing.T, b []byte) {
		o, _ := parseWrapped(AlgAES128CCMWrap, b)
		if o == nil {
			return
		}
		again := wrapPlain(AlgAES128CCMWrap, o)
		want := bytes.Clone(b)
		want[18] |= originWrapped
		if !bytes.Equal(again, want) {
			t.Fatalf("decoded %x, sealed back %x", want, again)
		}
	})
}
