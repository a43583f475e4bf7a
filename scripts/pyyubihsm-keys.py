#!/usr/bin/env python3
"""Key, HMAC, ECDH, attestation, reset and asymmetric-authentication flows
of Yubico's python-yubihsm against cmd/yubihsmsim.

Run by hand (CI has no python-yubihsm): start the simulator with
  go run ./cmd/yubihsmsim -addr 127.0.0.1:17346
then, with python-yubihsm's source on PYTHONPATH and pyca/cryptography and
requests installed,
  python3 scripts/pyyubihsm-keys.py [connector URL]
Every signature is verified with pyca/cryptography. It ends with
"N passed, 0 failed"; it resets the device on the way.
"""
import os
import sys

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, hmac, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa, utils

from yubihsm import YubiHsm
from yubihsm.defs import ALGORITHM, CAPABILITY, OBJECT
from yubihsm.exceptions import YubiHsmDeviceError
from yubihsm.objects import AsymmetricKey, AuthenticationKey, HmacKey, Opaque

url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:17346"
hsm = YubiHsm.connect(url)
info = hsm.get_device_info()
print("device info:", info.version, len(info.supported_algorithms), "algorithms")
s = hsm.create_session_derived(1, "password")
ok = 0


def check(cond, what):
    global ok
    if not cond:
        print("FAIL", what)
        sys.exit(1)
    ok += 1
    print("ok", what)


def verifies(f):
    try:
        f()
        return True
    except InvalidSignature:
        return False


msg = b"a block to sign"
for alg in (ALGORITHM.RSA_2048, ALGORITHM.RSA_3072, ALGORITHM.EC_P384, ALGORITHM.EC_K256):
    check(alg in info.supported_algorithms, "device info lists %s" % alg.name)

# RSA: put (p, q) and generate; PKCS#1 v1.5 and PSS with each hash.
caps = CAPABILITY.SIGN_PKCS | CAPABILITY.SIGN_PSS
for size in (2048, 3072):
    key = AsymmetricKey.put(s, 0, "py rsa %d" % size, 1, caps, rsa.generate_private_key(65537, size))
    pub = key.get_public_key()
    check(pub.key_size == size, "rsa %d put, public key" % size)
    for h in (hashes.SHA256(), hashes.SHA384(), hashes.SHA512()):
        sig = key.sign_pkcs1v1_5(msg, h)
        check(verifies(lambda: pub.verify(sig, msg, padding.PKCS1v15(), h)), "rsa %d pkcs1 %s" % (size, h.name))
        sig = key.sign_pss(msg, h.digest_size, h, h)
        pss = padding.PSS(mgf=padding.MGF1(h), salt_length=h.digest_size)
        check(verifies(lambda: pub.verify(sig, msg, pss, h)), "rsa %d pss %s" % (size, h.name))
gen = AsymmetricKey.generate(s, 0, "py rsa gen", 1, caps, ALGORITHM.RSA_2048)
sig = gen.sign_pkcs1v1_5(msg)
check(verifies(lambda: gen.get_public_key().verify(sig, msg, padding.PKCS1v15(), hashes.SHA256())), "rsa 2048 generated")

# ECDSA on P-384 and secp256k1: generate and put; Derive ECDH.
for curve, alg, h in ((ec.SECP384R1(), ALGORITHM.EC_P384, hashes.SHA384()), (ec.SECP256K1(), ALGORITHM.EC_K256, hashes.SHA256())):
    for how in ("generate", "put"):
        c = CAPABILITY.SIGN_ECDSA | CAPABILITY.DERIVE_ECDH
        if how == "generate":
            key = AsymmetricKey.generate(s, 0, "py %s" % curve.name, 1, c, alg)
        else:
            key = AsymmetricKey.put(s, 0, "py put %s" % curve.name, 1, c, ec.generate_private_key(curve))
        pub = key.get_public_key()
        sig = key.sign_ecdsa(msg, h)
        check(verifies(lambda: pub.verify(sig, msg, ec.ECDSA(h))), "%s %s sign_ecdsa" % (how, curve.name))
        peer = ec.generate_private_key(curve)
        check(key.derive_ecdh(peer.public_key()) == peer.exchange(ec.ECDH(), pub), "%s %s derive_ecdh" % (how, curve.name))

# HMAC: put and generate, sign and verify.
hkey = os.urandom(32)
hk = HmacKey.put(s, 0, "py hmac", 1, CAPABILITY.SIGN_HMAC | CAPABILITY.VERIFY_HMAC, hkey, ALGORITHM.HMAC_SHA256)
mac = hmac.HMAC(hkey, hashes.SHA256())
mac.update(msg)
want = mac.finalize()
check(hk.sign_hmac(msg) == want, "hmac sha256 sign matches pyca")
check(hk.verify_hmac(want, msg) and not hk.verify_hmac(want, msg + b"!"), "hmac verify")
hg = HmacKey.generate(s, 0, "py hmac gen", 1, CAPABILITY.SIGN_HMAC | CAPABILITY.VERIFY_HMAC, ALGORITHM.HMAC_SHA512)
check(hg.verify_hmac(hg.sign_hmac(msg), msg), "hmac sha512 generated, sign and verify")

# Attestation with the device's key, and with a key of one's own.
ed = AsymmetricKey.generate(s, 0, "py attested", 1, CAPABILITY.SIGN_EDDSA, ALGORITHM.EC_ED25519)
device_cert = Opaque(s, 0).get_certificate()
cert = ed.attest()
check(verifies(lambda: device_cert.public_key().verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm))),
      "attest with the device key")
check(cert.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw) ==
      ed.get_public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw), "attested key is the key")
attester_priv = ec.generate_private_key(ec.SECP256R1())
attester = AsymmetricKey.put(s, 0, "py attester", 1, CAPABILITY.SIGN_ATTESTATION_CERTIFICATE, attester_priv)
name = x509.Name([x509.NameAttribute(x509.oid.NameOID.COMMON_NAME, "py attestation CA")])
import datetime
now = datetime.datetime.now(datetime.timezone.utc)
tmpl = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(attester_priv.public_key())
        .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
        .sign(attester_priv, hashes.SHA256()))
attester.put_certificate("py attester cert", 1, CAPABILITY.NONE, tmpl)
cert = ed.attest(attester.id)
check(cert.issuer == name and verifies(lambda: attester_priv.public_key().verify(
    cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(cert.signature_hash_algorithm))), "attest with a key of one's own")

# List objects with two capability bits.
found = s.list_objects(object_type=OBJECT.HMAC_KEY, capabilities=CAPABILITY.SIGN_HMAC | CAPABILITY.SIGN_SSH_CERTIFICATE)
check(len(found) == 2, "list_objects with two capability bits lists the keys holding one")

# The authentication algorithm cannot be turned off under its key.
try:
    s.set_enabled_algorithms({ALGORITHM.AES128_YUBICO_AUTHENTICATION: False})
    check(False, "turning aes128-yubico-authentication off is refused")
except YubiHsmDeviceError:
    check(s.get_enabled_algorithms()[ALGORITHM.AES128_YUBICO_AUTHENTICATION], "aes128-yubico-authentication stays on")

# Asymmetric authentication.
auth_priv = ec.generate_private_key(ec.SECP256R1())
AuthenticationKey.put_public_key(s, 0x42, "py asym", 1, CAPABILITY.GET_PSEUDO_RANDOM, CAPABILITY.NONE, auth_priv.public_key())
a = hsm.create_session_asymmetric(0x42, auth_priv)
check(len(a.get_pseudo_random(16)) == 16, "asymmetric session runs commands")
a.close()
try:
    hsm.create_session_asymmetric(0x42, ec.generate_private_key(ec.SECP256R1()))
    check(False, "another private key is refused")
except Exception as e:
    check(True, "another private key is refused (%s)" % type(e).__name__)

# Reset.
s.reset_device()
hsm = YubiHsm.connect(url)
s = hsm.create_session_derived(1, "password")
check([(o.id, o.object_type) for o in s.list_objects()] == [(1, OBJECT.AUTHENTICATION_KEY)], "reset_device leaves the factory key")
s.close()
print("%d passed, 0 failed" % ok)
