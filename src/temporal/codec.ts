/**
 * Encrypts what the service writes into Temporal's history (workflow and activity inputs and results, signals,
 * queries, memos, failure messages and stack traces) with AES-256-GCM, so that whoever reads the history without
 * the key learns no address. Each payload is replaced by one whose metadata names the encoding and the key id
 * and whose data is nonce (12 bytes) || ciphertext || GCM tag (16 bytes) of the whole original payload (its
 * metadata and data, protobuf-encoded). The key id is also the cipher's associated data, so a payload cannot be
 * relabelled to another key. Payloads that are not encrypted (histories written before the codec) pass through.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { Config } from '../config.ts';

export const ENCRYPTED_ENCODING = 'binary/encrypted';
export const KEY_ID_METADATA = 'encryption-key-id';
const CIPHER_METADATA = 'encryption-cipher';
const CIPHER = 'AES-256-GCM';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

const ProtoPayload = proto.temporal.api.common.v1.Payload;
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** A payload the codec cannot decrypt; the message says why and what to do, never anything of the key. */
export class PayloadCodecError extends Error {
  override name = 'PayloadCodecError';
}

export class AesGcmPayloadCodec implements PayloadCodec {
  readonly #keys: ReadonlyMap<string, Buffer>;
  readonly #encryptingKeyId: string;

  /** `keys`: key id → 32-byte key; `encryptingKeyId` encrypts, every key decrypts (rotation). */
  constructor(keys: Record<string, Uint8Array>, encryptingKeyId: string) {
    const map = new Map<string, Buffer>();
    for (const [id, key] of Object.entries(keys)) {
      if (key.length !== 32) throw new PayloadCodecError(`payload codec key "${id}" must be 32 bytes (AES-256), got ${key.length}`);
      map.set(id, Buffer.from(key));
    }
    if (!map.has(encryptingKeyId))
      throw new PayloadCodecError(`the encrypting key id "${encryptingKeyId}" is not among the payload codec keys (${[...map.keys()].join(', ')})`);
    this.#keys = map;
    this.#encryptingKeyId = encryptingKeyId;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.#encrypt(payload));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.#decrypt(payload));
  }

  #encrypt(payload: Payload): Payload {
    const keyId = this.#encryptingKeyId;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#keys.get(keyId) as Buffer, nonce);
    cipher.setAAD(utf8.encode(keyId));
    const plain = ProtoPayload.encode(payload).finish();
    const data = Buffer.concat([nonce, cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    return {
      metadata: { encoding: utf8.encode(ENCRYPTED_ENCODING), [KEY_ID_METADATA]: utf8.encode(keyId), [CIPHER_METADATA]: utf8.encode(CIPHER) },
      data,
    };
  }

  #decrypt(payload: Payload): Payload {
    const encoding = payload.metadata?.encoding;
    if (!encoding || fromUtf8.decode(encoding) !== ENCRYPTED_ENCODING) return payload;
    const idBytes = payload.metadata?.[KEY_ID_METADATA];
    if (!idBytes) throw new PayloadCodecError(`an encrypted payload carries no ${KEY_ID_METADATA}: it was not written by this codec`);
    const keyId = fromUtf8.decode(idBytes);
    const key = this.#keys.get(keyId);
    if (!key) {
      throw new PayloadCodecError(
        `payload encrypted with key id "${keyId}", which this process does not have (it has ${[...this.#keys.keys()].join(', ')}): add that key to PAYLOAD_CODEC_KEYS (docs/operations.md, key rotation)`,
      );
    }
    const data = payload.data ?? new Uint8Array();
    if (data.length < NONCE_BYTES + TAG_BYTES) throw new PayloadCodecError(`encrypted payload (key id "${keyId}") is too short to be one: it was truncated`);
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, NONCE_BYTES));
      decipher.setAAD(idBytes);
      decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
      const plain = Buffer.concat([decipher.update(data.subarray(NONCE_BYTES, data.length - TAG_BYTES)), decipher.final()]);
      const decoded = ProtoPayload.decode(plain);
      return { metadata: decoded.metadata, data: decoded.data };
    } catch {
      throw new PayloadCodecError(
        `encrypted payload (key id "${keyId}") failed authentication: it was altered, or the key under id "${keyId}" in PAYLOAD_CODEC_KEYS is not the one it was written with`,
      );
    }
  }
}

/** The codec of configuration, or null when PAYLOAD_CODEC=off. */
export function payloadCodecOf(config: Pick<Config, 'PAYLOAD_CODEC' | 'PAYLOAD_CODEC_KEYS' | 'PAYLOAD_CODEC_KEY_ID'>): AesGcmPayloadCodec | null {
  if (config.PAYLOAD_CODEC === 'off' || !config.PAYLOAD_CODEC_KEYS || !config.PAYLOAD_CODEC_KEY_ID) return null;
  return new AesGcmPayloadCodec(
    Object.fromEntries(Object.entries(config.PAYLOAD_CODEC_KEYS).map(([id, key]) => [id, Buffer.from(key, 'base64')])),
    config.PAYLOAD_CODEC_KEY_ID,
  );
}

/**
 * The module that exports `failureConverter` (bundled into the workflow code, and loaded by the worker for its
 * activities): failure messages and stack traces go into an encoded payload, which the codec then encrypts.
 */
export const failureConverterPath = fileURLToPath(new URL(`./failureConverter${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/**
 * The data converter of every client and worker: the codec (when on) and failure messages moved into payloads.
 * A worker's must name the failure converter module its workflow bundle was built with (bundleWorkflows does).
 */
export function temporalDataConverter(codec: PayloadCodec | null): DataConverter {
  return { payloadCodecs: codec ? [codec] : [], failureConverterPath };
}

/** A fresh 32-byte codec key, base64 (what PAYLOAD_CODEC_KEYS holds per key id). */
export function generatePayloadCodecKey(): string {
  return randomBytes(32).toString('base64');
}
