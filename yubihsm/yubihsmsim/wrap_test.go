package yubihsmsim_test

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	yubihsm "github.com/certusone/yubihsm-go"
	"github.com/certusone/yubihsm-go/commands"
	"github.com/certusone/yubihsm-go/connector"

	"github.com/signerkit/signerkit/yubihsm/yubihsmsim"
)

// A wrapped Ed25519 key made outside the simulator, with pyca/cryptography
// (AESCCM, tag 16) in the object format of Yubico's yubihsm-wrap
// (yhwrap/main.c: a 59-byte header, then the key as common/util.c's
// read_private_key lays it out: clamped scalar big-endian, nonce prefix,
// public key): id 0x0042, label "yhwrap", domain 1, capabilities
// sign-eddsa and exportable-under-wrap, under the AES-256 wrap key of 32
// bytes 0x11, from the seed 0x64…0x83.
const (
	yhwrapSeed = "6465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f80818283"
	yhwrapBlob = "0102030405060708090a0b0c0deab66e04c1bf4af9989ca73fd1b3ebeb200c9f39e89a0fae80613730a4865aaba01f5161f28802ef9c05ac92812807afbfc2dac2d0087c84c217f5f2f552bc8df983a4433efdbe8c796939803fad8157844b1ed63b27d983c8aae8cb3d84ac9d40f19d9045787067f1b8ed66c89cea1ae2c732253933fd0040cd2eed98c9db1f71bdbb98060cf8bd083fb61f1ab8923f76d3c23e121e40de24ce20642a5300978054a5e66cfb0074292062"
)

// TestYubihsmGoWrap drives the wrap commands with the real yubihsm-go
// client: Put Wrap Key, Import Wrapped of an object wrapped outside the
// simulator (which then signs exactly as crypto/ed25519 does from the
// seed), Export Wrapped and Import Wrapped back, and the refusals.
func TestYubihsmGoWrap(t *testing.T) {
	dev := yubihsmsim.New(yubihsmsim.Config{})
	srv := httptest.NewServer(dev.Handler())
	defer srv.Close()
	defer http.DefaultClient.CloseIdleConnections()
	m, err := yubihsm.NewSessionManager(connector.NewHTTPConnector(strings.TrimPrefix(srv.URL, "http://")), 1, "password")
	if err != nil {
		t.Fatal(err)
	}
	defer m.Destroy()
	send := func(c *commands.CommandMessage, err error) (commands.Response, error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return m.SendEncryptedCommand(c)
	}
	must := func(r commands.Response, err error) commands.Response {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	code := func(_ commands.Response, err error) commands.ErrorCode {
		t.Helper()
		e, ok := err.(*commands.Error)
		if !ok {
			t.Fatalf("want a device error, got %v", err)
		}
		return e.Code
	}
	put := must(send(commands.CreatePutWrapkeyCommand(9, []byte("wrap"), 1, commands.CapabilityExportWrapped|commands.CapabilityImportWrapped,
		commands.AlgorithmAES256CCMWrap, 0x7fffffffffff, bytes.Repeat([]byte{0x11}, 32)))).(*commands.PutWrapkeyResponse)
	if put.ObjectID != 9 {
		t.Fatalf("put wrap key: id %d", put.ObjectID)
	}
	blob, _ := hex.DecodeString(yhwrapBlob)
	imp := must(send(commands.CreateImportWrappedCommand(9, blob[:13], blob[13:]))).(*commands.ImportWrappedResponse)
	if imp.ObjectType != commands.ObjectTypeAsymmetricKey || imp.ObjectID != 0x42 {
		t.Fatalf("import wrapped: %+v", imp)
	}
	seed, _ := hex.DecodeString(yhwrapSeed)
	ref := ed25519.NewKeyFromSeed(seed)
	msg := []byte("signed under a key imported under wrap")
	sig := must(send(commands.CreateSignDataEddsaCommand(0x42, msg))).(*commands.SignDataEddsaResponse)
	if want := ed25519.Sign(ref, msg); !bytes.Equal(sig.Signature, want) {
		t.Fatalf("the imported key signs %x, crypto/ed25519 %x", sig.Signature, want)
	}
	pk := must(send(commands.CreateGetPubKeyCommand(0x42))).(*commands.GetPubKeyResponse)
	if !bytes.Equal(pk.KeyData, ref.Public().(ed25519.PublicKey)) {
		t.Fatal("public key differs")
	}
	// The same object again: OBJECT EXISTS. Export, delete, import back.
	if c := code(send(commands.CreateImportWrappedCommand(9, blob[:13], blob[13:]))); c != commands.ErrorCodeObjectExists {
		t.Errorf("second import: %v", c)
	}
	exp := must(send(commands.CreateExportWrappedCommand(9, commands.ObjectTypeAsymmetricKey, 0x42))).(*commands.ExportWrappedResponse)
	must(send(commands.CreateDeleteObjectCommand(0x42, commands.ObjectTypeAsymmetricKey)))
	must(send(commands.CreateImportWrappedCommand(9, exp.Nonce, exp.Data)))
	sig2 := must(send(commands.CreateSignDataEddsaCommand(0x42, msg))).(*commands.SignDataEddsaResponse)
	if !bytes.Equal(sig2.Signature, sig.Signature) {
		t.Fatal("the key exported and imported back signs differently")
	}
	// Refusals: a damaged object, a key generated without
	// exportable-under-wrap, a wrap key without export-wrapped.
	bad := bytes.Clone(blob)
	bad[20] ^= 1
	if c := code(send(commands.CreateImportWrappedCommand(9, bad[:13], bad[13:]))); c != commands.ErrorCodeInvalidData {
		t.Errorf("damaged import: %v", c)
	}
	must(send(commands.CreateGenerateAsymmetricKeyCommand(0x50, []byte("fixed"), 1, commands.CapabilityAsymmetricSignEddsa, commands.AlgorithmED25519)))
	if c := code(send(commands.CreateExportWrappedCommand(9, commands.ObjectTypeAsymmetricKey, 0x50))); c != commands.ErrorCodeInvalidPermission {
		t.Errorf("export of a non-exportable key: %v", c)
	}
	must(send(commands.CreatePutWrapkeyCommand(10, []byte("import only"), 1, commands.CapabilityImportWrapped,
		commands.AlgorithmAES128CCMWrap, 0x7fffffffffff, make([]byte, 16))))
	if c := code(send(commands.CreateExportWrappedCommand(10, commands.ObjectTypeAsymmetricKey, 0x42))); c != commands.ErrorCodeInvalidPermission {
		t.Errorf("export under an import-only wrap key: %v", c)
	}
	if c := code(send(commands.CreateExportWrappedCommand(11, commands.ObjectTypeAsymmetricKey, 0x42))); c != commands.ErrorCodeObjectNotFound {
		t.Errorf("export under a missing wrap key: %v", c)
	}
}
