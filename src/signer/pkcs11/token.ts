import { createRequire } from 'node:module';
import type * as Pkcs11Types from 'pkcs11js';

/**
 * One logged-in session on a PKCS#11 token (SoftHSM2 locally and in CI; a network HSM in production): the few
 * operations the signer needs, each on an object found by its label. Private keys and the pool seed are created
 * sensitive and non-extractable: they sign and MAC inside the token and no call here can read them.
 */
export interface Pkcs11Token {
  /** The uncompressed public point (0x04‖x‖y) of the EC key pair labelled `label`. */
  ecPublicKey(label: string): Uint8Array;
  /** CKM_ECDSA over a 32-byte digest with the private key labelled `label`: r‖s, 64 bytes. */
  signDigest(label: string, digest: Uint8Array): Uint8Array;
  /** CKM_SHA256_HMAC of `data` under the secret key labelled `label`. */
  hmacSha256(label: string, data: Uint8Array): Uint8Array;
  /** A data object's value (public facts kept beside the keys: a role key's chain code). */
  data(label: string): Uint8Array;
  has(label: string): boolean;
  /** Setup only: a secp256k1 key pair generated inside the token. */
  generateEcKey(label: string): void;
  /** Setup only: a secp256k1 private key imported (sensitive, non-extractable from then on) with its public point. */
  importEcKey(label: string, privateKey: Uint8Array, publicPoint: Uint8Array): void;
  /** Setup only: a generic secret (HMAC key); generated inside the token when `value` is not given. */
  putSecret(label: string, value?: Uint8Array): void;
  putData(label: string, value: Uint8Array): void;
  close(): void;
}

export interface Pkcs11Settings {
  /** The token's PKCS#11 library (SoftHSM2: /usr/lib/softhsm/libsofthsm2.so). */
  module: string;
  /** The token's label (softhsm2-util --init-token --label …). */
  tokenLabel: string;
  /** The user PIN. */
  pin: string;
}

/** secp256k1's object identifier, DER-encoded (CKA_EC_PARAMS). */
const SECP256K1_OID = Buffer.from('06052b8104000a', 'hex');

export function openPkcs11Token(settings: Pkcs11Settings): Pkcs11Token {
  // Loaded here only: the API and the worker never need the native binding.
  const pkcs11js = createRequire(import.meta.url)('pkcs11js') as typeof Pkcs11Types;
  const p11 = new pkcs11js.PKCS11();
  try {
    p11.load(settings.module);
  } catch (error) {
    throw new Error(
      `the PKCS#11 library ${settings.module} could not be loaded (${(error as Error).message}): install it (Debian: apt-get install softhsm2) or set SIGNER_PKCS11_MODULE`,
    );
  }
  p11.C_Initialize();
  let session: Buffer;
  try {
    const slot = p11.C_GetSlotList(true).find((candidate) => p11.C_GetTokenInfo(candidate).label.trim() === settings.tokenLabel);
    if (!slot)
      throw new Error(
        `no initialised PKCS#11 token is labelled "${settings.tokenLabel}" (SIGNER_PKCS11_TOKEN): initialise it first (docs/security.md, "Keys in a PKCS#11 token")`,
      );
    session = p11.C_OpenSession(slot, pkcs11js.CKF_SERIAL_SESSION | pkcs11js.CKF_RW_SESSION);
    try {
      p11.C_Login(session, pkcs11js.CKU_USER, settings.pin);
    } catch (error) {
      // The library's code only (CKR_PIN_INCORRECT, CKR_PIN_LOCKED): never the PIN.
      throw new Error(`the PKCS#11 token "${settings.tokenLabel}" refused the PIN (SIGNER_PKCS11_PIN): ${(error as Error).message.split(':')[0]}`);
    }
  } catch (error) {
    p11.C_Finalize();
    throw error;
  }

  const handles = new Map<string, Buffer>();
  const find = (cls: number, label: string): Buffer | undefined => {
    const key = `${cls}/${label}`;
    const known = handles.get(key);
    if (known) return known;
    p11.C_FindObjectsInit(session, [
      { type: pkcs11js.CKA_CLASS, value: cls },
      { type: pkcs11js.CKA_LABEL, value: label },
    ]);
    const found = p11.C_FindObjects(session, 2);
    p11.C_FindObjectsFinal(session);
    if (found.length > 1) throw new Error(`the PKCS#11 token holds ${found.length} objects labelled "${label}": one is expected`);
    if (found[0]) handles.set(key, found[0]);
    return found[0];
  };
  const need = (cls: number, label: string, what: string) => {
    const handle = find(cls, label);
    if (!handle) throw new Error(`the PKCS#11 token holds no ${what} labelled "${label}": initialise it (npm run signer:token -- init)`);
    return handle;
  };
  const common = (label: string) => [
    { type: pkcs11js.CKA_TOKEN, value: true },
    { type: pkcs11js.CKA_LABEL, value: label },
  ];
  const secretKeyAttributes = [
    { type: pkcs11js.CKA_PRIVATE, value: true },
    { type: pkcs11js.CKA_SENSITIVE, value: true },
    { type: pkcs11js.CKA_EXTRACTABLE, value: false },
  ];
  const refuseExisting = (label: string) => {
    if ([pkcs11js.CKO_PRIVATE_KEY, pkcs11js.CKO_PUBLIC_KEY, pkcs11js.CKO_SECRET_KEY, pkcs11js.CKO_DATA].some((cls) => find(cls, label))) {
      throw new Error(`the PKCS#11 token already holds an object labelled "${label}": keys are never replaced`);
    }
  };

  return {
    ecPublicKey(label) {
      const [attribute] = p11.C_GetAttributeValue(session, need(pkcs11js.CKO_PUBLIC_KEY, label, 'public key'), [{ type: pkcs11js.CKA_EC_POINT }]);
      return ecPointFromDer(attribute?.value as Buffer);
    },
    signDigest(label, digest) {
      if (digest.length !== 32) throw new Error('the token signs 32-byte digests only');
      p11.C_SignInit(session, { mechanism: pkcs11js.CKM_ECDSA }, need(pkcs11js.CKO_PRIVATE_KEY, label, 'private key'));
      return new Uint8Array(p11.C_Sign(session, Buffer.from(digest), Buffer.alloc(64)));
    },
    hmacSha256(label, data) {
      p11.C_SignInit(session, { mechanism: pkcs11js.CKM_SHA256_HMAC }, need(pkcs11js.CKO_SECRET_KEY, label, 'secret key'));
      return new Uint8Array(p11.C_Sign(session, Buffer.from(data), Buffer.alloc(32)));
    },
    data(label) {
      const [attribute] = p11.C_GetAttributeValue(session, need(pkcs11js.CKO_DATA, label, 'data object'), [{ type: pkcs11js.CKA_VALUE }]);
      return new Uint8Array(attribute?.value as Buffer);
    },
    has: (label) => [pkcs11js.CKO_PRIVATE_KEY, pkcs11js.CKO_SECRET_KEY, pkcs11js.CKO_DATA].some((cls) => find(cls, label) !== undefined),
    generateEcKey(label) {
      refuseExisting(label);
      p11.C_GenerateKeyPair(
        session,
        { mechanism: pkcs11js.CKM_EC_KEY_PAIR_GEN },
        [...common(label), { type: pkcs11js.CKA_EC_PARAMS, value: SECP256K1_OID }, { type: pkcs11js.CKA_VERIFY, value: true }],
        [...common(label), ...secretKeyAttributes, { type: pkcs11js.CKA_SIGN, value: true }],
      );
    },
    importEcKey(label, privateKey, publicPoint) {
      refuseExisting(label);
      p11.C_CreateObject(session, [
        ...common(label),
        ...secretKeyAttributes,
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PRIVATE_KEY },
        { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_EC },
        { type: pkcs11js.CKA_EC_PARAMS, value: SECP256K1_OID },
        { type: pkcs11js.CKA_VALUE, value: Buffer.from(privateKey) },
        { type: pkcs11js.CKA_SIGN, value: true },
      ]);
      p11.C_CreateObject(session, [
        ...common(label),
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_PUBLIC_KEY },
        { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_EC },
        { type: pkcs11js.CKA_EC_PARAMS, value: SECP256K1_OID },
        { type: pkcs11js.CKA_EC_POINT, value: ecPointToDer(publicPoint) },
        { type: pkcs11js.CKA_VERIFY, value: true },
      ]);
    },
    putSecret(label, value) {
      refuseExisting(label);
      const attributes = [
        ...common(label),
        ...secretKeyAttributes,
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_SECRET_KEY },
        { type: pkcs11js.CKA_KEY_TYPE, value: pkcs11js.CKK_GENERIC_SECRET },
        { type: pkcs11js.CKA_SIGN, value: true },
      ];
      if (value) p11.C_CreateObject(session, [...attributes, { type: pkcs11js.CKA_VALUE, value: Buffer.from(value) }]);
      else p11.C_GenerateKey(session, { mechanism: pkcs11js.CKM_GENERIC_SECRET_KEY_GEN }, [...attributes, { type: pkcs11js.CKA_VALUE_LEN, value: 64 }]);
    },
    putData(label, value) {
      refuseExisting(label);
      p11.C_CreateObject(session, [
        ...common(label),
        { type: pkcs11js.CKA_CLASS, value: pkcs11js.CKO_DATA },
        { type: pkcs11js.CKA_PRIVATE, value: true },
        { type: pkcs11js.CKA_VALUE, value: Buffer.from(value) },
      ]);
    },
    close() {
      try {
        p11.C_Logout(session);
        p11.C_CloseSession(session);
      } finally {
        p11.C_Finalize();
      }
    },
  };
}

/** CKA_EC_POINT is the uncompressed point wrapped in a DER OCTET STRING (04 41 04‖x‖y). */
function ecPointFromDer(der: Buffer): Uint8Array {
  if (der.length === 67 && der[0] === 0x04 && der[1] === 0x41 && der[2] === 0x04) return new Uint8Array(der.subarray(2));
  if (der.length === 65 && der[0] === 0x04) return new Uint8Array(der);
  throw new Error('the token returned an EC point that is not an uncompressed secp256k1 point');
}

const ecPointToDer = (point: Uint8Array) => Buffer.concat([Buffer.from([0x04, point.length]), Buffer.from(point)]);
