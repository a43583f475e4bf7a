#!/usr/bin/env python3
"""Wrap-key flows of Yubico's python-yubihsm against cmd/yubihsmsim.

Run by hand (CI has no python-yubihsm): start the simulator with
  go run ./cmd/yubihsmsim -addr 127.0.0.1:17345
then, with python-yubihsm's source on PYTHONPATH and pyca/cryptography and
requests installed,
  python3 scripts/pyyubihsm-wrap.py [connector URL]
It puts and generates wrap keys, exports and imports Ed25519 and P-256
keys under each (the imported Ed25519 key must sign identically), and
checks the refusals. It ends with "N passed, 0 failed".
"""
import sys
from yubihsm import YubiHsm
from yubihsm.defs import ALGORITHM, CAPABILITY, OBJECT
from yubihsm.objects import WrapKey, AsymmetricKey
from yubihsm.exceptions import YubiHsmDeviceError
from cryptography.hazmat.primitives.asymmetric import ed25519, ec
from cryptography.hazmat.primitives import hashes, serialization
import os

hsm = YubiHsm.connect(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:17345")
info = hsm.get_device_info()
print("device info:", info.version, info.serial, sorted(a.name for a in info.supported_algorithms))
s = hsm.create_session_derived(1, "password")
ok = 0
def check(cond, what):
    global ok
    if not cond:
        print("FAIL", what); sys.exit(1)
    ok += 1; print("ok", what)

wk = WrapKey.put(s, 0, "py wrap", 1, CAPABILITY.EXPORT_WRAPPED | CAPABILITY.IMPORT_WRAPPED, ALGORITHM.AES256_CCM_WRAP,
                 CAPABILITY.SIGN_EDDSA | CAPABILITY.SIGN_ECDSA | CAPABILITY.EXPORTABLE_UNDER_WRAP, os.urandom(32))
check(wk.get_info().algorithm == ALGORITHM.AES256_CCM_WRAP, "put_wrap_key, get_info")
gk = WrapKey.generate(s, 0, "py gen wrap", 1, CAPABILITY.EXPORT_WRAPPED | CAPABILITY.IMPORT_WRAPPED, ALGORITHM.AES128_CCM_WRAP, CAPABILITY.SIGN_EDDSA | CAPABILITY.EXPORTABLE_UNDER_WRAP)
check(gk.get_info().origin is not None, "generate_wrap_key")

key = AsymmetricKey.generate(s, 0, "py ed", 1, CAPABILITY.SIGN_EDDSA | CAPABILITY.EXPORTABLE_UNDER_WRAP, ALGORITHM.EC_ED25519)
pub = key.get_public_key()
msg = b"a vote at height 3"
sig = key.sign_eddsa(msg)
pub.verify(sig, msg)
check(True, "ed25519 sign verifies (pyca)")
for w in (wk, gk):
    blob = w.export_wrapped(key)
    key.delete()
    key2 = w.import_wrapped(blob)
    check(key2.id == key.id and key2.get_public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw) ==
          pub.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw), "export_wrapped/import_wrapped under %s" % w.get_info().label)
    check(key2.sign_eddsa(msg) == sig, "imported key signs identically")
    key = key2
    o = key.get_info().origin
    print("origin", o)

ec_key = AsymmetricKey.put(s, 0, "py p256", 1, CAPABILITY.SIGN_ECDSA | CAPABILITY.EXPORTABLE_UNDER_WRAP, ec.generate_private_key(ec.SECP256R1()))
blob = wk.export_wrapped(ec_key)
ec_pub = ec_key.get_public_key()
ec_key.delete()
ec2 = wk.import_wrapped(blob)
ec2.get_public_key().verify(ec2.sign_ecdsa(msg), msg, ec.ECDSA(hashes.SHA256()))
check(True, "p256 export/import, sign verifies")

fixed = AsymmetricKey.generate(s, 0, "fixed", 1, CAPABILITY.SIGN_EDDSA, ALGORITHM.EC_ED25519)
try:
    wk.export_wrapped(fixed); check(False, "export of non-exportable")
except YubiHsmDeviceError as e:
    check(e.code.name == "INSUFFICIENT_PERMISSIONS", "non-exportable refused: %s" % e.code.name)
try:
    wk.import_wrapped(blob[:-1] + bytes([blob[-1] ^ 1])); check(False, "damaged import")
except YubiHsmDeviceError as e:
    check(e.code.name == "INVALID_DATA", "damaged import refused: %s" % e.code.name)
try:
    wk.export_wrapped(key, seed=True); print("seed export accepted")
except YubiHsmDeviceError as e:
    print("seed export (format 1):", e.code.name)
print(ok, "passed, 0 failed")
