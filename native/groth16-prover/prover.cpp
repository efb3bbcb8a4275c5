// Groth16 prover for BN254 zkeys written by snarkjs, on iden3's ffiasm field and curve arithmetic.
//
// The service (src/providers/privacy-pools/nativeProver.ts) starts one of these per proving slot and talks
// to it over stdin/stdout in frames: one tag byte, a little-endian u64 length, the payload.
//   -> 'K' zkey bytes        <- 'O' {"nVars":…,"nPublic":…,"domainSize":…}   (once, first)
//   -> 'W' wtns bytes        <- 'O' {"pi_a":[…],"pi_b":[[…]…],"pi_c":[…]}     (once per proof)
//   <- 'E' message           (the request was refused; the process keeps serving)
// The zkey arrives through the pipe, not by path, so the bytes it proves with are the bytes the service
// checked against the SDK's hashes. It keeps them in memory until stdin closes.
//
// The proof follows the Groth16 prover snarkjs implements (groth16_prove.js), so a proof from here verifies
// with snarkjs's groth16.verify and the pool's on-chain verifier:
//   A = alpha1 + sum(w_i A_i) + r delta1          B = beta2 + sum(w_i B2_i) + s delta2
//   C = sum(w_i C_i) + sum(h_j H_j) + s A + r (beta1 + sum(w_i B1_i) + s delta1) - r s delta1
// with h the quotient's evaluations over the odd coset of the 2n-th roots of unity (the zkey's H points are
// built for that coset). r and s come from getrandom(2): with a guessable r or s, anyone could strip the
// blinding from A and C and test guesses of the note's secrets against the public proof.
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gmp.h>
#include <omp.h>

#include "alt_bn128.hpp"
#include "fft.hpp"

using namespace AltBn128;

namespace {

typedef Engine::FrElement FrElement;
typedef Engine::G1Point G1Point;
typedef Engine::G1PointAffine G1PointAffine;
typedef Engine::G2Point G2Point;
typedef Engine::G2PointAffine G2PointAffine;

const char *const BN254_Q = "21888242871839275222246405745257275088696311157297823662689037894645226208583";
const char *const BN254_R = "21888242871839275222246405745257275088548364400416034343698204186575808495617";
const uint32_t N8 = 32;
// BN254's scalar field order r in little-endian 64-bit limbs (the decimal above).
const uint64_t R_LIMBS[4] = {0x43e1f593f0000001ULL, 0x2833e84879b97091ULL, 0xb85045b68181585dULL, 0x30644e72e131a029ULL};

// Whether a little-endian 256-bit value is below r. Limb compares, no GMP: GMP would copy secrets into heap
// memory it frees without wiping.
bool lessThanR(const uint64_t v[4]) {
  for (int i = 3; i >= 0; i--) {
    if (v[i] != R_LIMBS[i]) return v[i] < R_LIMBS[i];
  }
  return false;
}

struct Refusal : std::runtime_error {
  explicit Refusal(const std::string &what) : std::runtime_error(what) {}
};

// One binary file of snarkjs's format: magic, version, then (type, u64 size, bytes) sections.
class BinFile {
 public:
  BinFile(const std::vector<uint8_t> &bytes, const char *magic, uint32_t maxVersion) : data(bytes) {
    if (data.size() < 12 || memcmp(data.data(), magic, 4) != 0) throw Refusal(std::string("not a ") + magic + " file");
    if (u32(4) > maxVersion) throw Refusal(std::string("unsupported ") + magic + " version");
    uint32_t nSections = u32(8);
    uint64_t pos = 12;
    for (uint32_t i = 0; i < nSections; i++) {
      need(pos, 12);
      uint32_t type = u32(pos);
      uint64_t size = u64(pos + 4);
      pos += 12;
      need(pos, size);
      if (type < sections.size() && sections[type].second == 0) sections[type] = {pos, size};
      pos += size;
    }
  }

  // A section's start and size; refuses a section missing or smaller than `minSize`.
  const uint8_t *section(uint32_t type, uint64_t minSize, uint64_t *size = nullptr) const {
    if (type >= sections.size() || sections[type].second < minSize) throw Refusal("section " + std::to_string(type) + " missing or short");
    if (size) *size = sections[type].second;
    return data.data() + sections[type].first;
  }

  uint32_t u32(uint64_t pos) const {
    need(pos, 4);
    uint32_t v;
    memcpy(&v, data.data() + pos, 4);
    return v;
  }
  uint64_t u64(uint64_t pos) const {
    need(pos, 8);
    uint64_t v;
    memcpy(&v, data.data() + pos, 8);
    return v;
  }

 private:
  void need(uint64_t pos, uint64_t len) const {
    if (pos > data.size() || len > data.size() - pos) throw Refusal("file truncated");
  }
  const std::vector<uint8_t> &data;
  std::vector<std::pair<uint64_t, uint64_t>> sections = std::vector<std::pair<uint64_t, uint64_t>>(16, {0, 0});
};

bool equalsPrime(const uint8_t *le, const char *decimal) {
  mpz_t a, b;
  mpz_init(a);
  mpz_init_set_str(b, decimal, 10);
  mpz_import(a, N8, -1, 1, -1, 0, le);
  bool eq = mpz_cmp(a, b) == 0;
  mpz_clear(a);
  mpz_clear(b);
  return eq;
}

uint32_t log2Exact(uint64_t n) {
  uint32_t p = 0;
  while ((uint64_t(1) << p) < n) p++;
  if ((uint64_t(1) << p) != n) throw Refusal("domain size is not a power of two");
  return p;
}

struct Coef {
  uint32_t matrix;
  uint32_t constraint;
  uint32_t signal;
  FrElement value;  // v·R² as snarkjs stores it, so a Montgomery product with a plain witness value is v·w in Montgomery form
} __attribute__((packed));

class ProvingKey {
 public:
  explicit ProvingKey(std::vector<uint8_t> bytes) : raw(std::move(bytes)), file(raw, "zkey", 1) {
    if (file.u32(section(1, 4) - raw.data()) != 1) throw Refusal("zkey is not a Groth16 key");
    // n8q, q, n8r, r, nVars, nPublic, domainSize, then alpha1, beta1, beta2, gamma2, delta1, delta2.
    uint64_t pos = section(2, 4 + N8 + 4 + N8 + 12 + 18 * N8) - raw.data();
    if (file.u32(pos) != N8 || !equalsPrime(raw.data() + pos + 4, BN254_Q)) throw Refusal("zkey is not for BN254 (base field)");
    pos += 4 + N8;
    if (file.u32(pos) != N8 || !equalsPrime(raw.data() + pos + 4, BN254_R)) throw Refusal("zkey is not for BN254 (scalar field)");
    pos += 4 + N8;
    nVars = file.u32(pos);
    nPublic = file.u32(pos + 4);
    domainSize = file.u32(pos + 8);
    pos += 12;
    alpha1 = reinterpret_cast<const G1PointAffine *>(raw.data() + pos);
    beta1 = reinterpret_cast<const G1PointAffine *>(raw.data() + pos + 2 * N8);
    beta2 = reinterpret_cast<const G2PointAffine *>(raw.data() + pos + 4 * N8);
    delta1 = reinterpret_cast<const G1PointAffine *>(raw.data() + pos + 12 * N8);
    delta2 = reinterpret_cast<const G2PointAffine *>(raw.data() + pos + 14 * N8);
    if (uint64_t(nPublic) + 1 > nVars) throw Refusal("zkey has more public signals than signals");
    domainPower = log2Exact(domainSize);

    uint64_t coefBytes;
    const uint8_t *coefSection = file.section(4, 4, &coefBytes);
    nCoefs = file.u32(coefSection - raw.data());
    if (4 + uint64_t(nCoefs) * sizeof(Coef) > coefBytes) throw Refusal("zkey coefficient section truncated");
    coefs = reinterpret_cast<const Coef *>(coefSection + 4);
    for (uint32_t i = 0; i < nCoefs; i++) {
      if (coefs[i].matrix > 1 || coefs[i].constraint >= domainSize || coefs[i].signal >= nVars) throw Refusal("zkey coefficient out of range");
    }
    pointsA = reinterpret_cast<const G1PointAffine *>(section(5, uint64_t(nVars) * 2 * N8));
    pointsB1 = reinterpret_cast<const G1PointAffine *>(section(6, uint64_t(nVars) * 2 * N8));
    pointsB2 = reinterpret_cast<const G2PointAffine *>(section(7, uint64_t(nVars) * 4 * N8));
    pointsC = reinterpret_cast<const G1PointAffine *>(section(8, (uint64_t(nVars) - nPublic - 1) * 2 * N8));
    pointsH = reinterpret_cast<const G1PointAffine *>(section(9, uint64_t(domainSize) * 2 * N8));
  }

  uint32_t nVars, nPublic, domainSize, domainPower, nCoefs;
  const G1PointAffine *alpha1, *beta1, *delta1, *pointsA, *pointsB1, *pointsC, *pointsH;
  const G2PointAffine *beta2, *delta2, *pointsB2;
  const Coef *coefs;

 private:
  const uint8_t *section(uint32_t type, uint64_t minSize) const { return file.section(type, minSize); }
  std::vector<uint8_t> raw;
  BinFile file;
};

// A uniform nonzero scalar below r, in plain (not Montgomery) little-endian form: 254 random bits from the
// kernel's CSPRNG, drawn again while the value is not below r (rejection keeps it exactly uniform; about one
// draw in four is redrawn).
void randomScalar(FrElement &out) {
  uint64_t limbs[4];
  uint8_t *buf = reinterpret_cast<uint8_t *>(limbs);
  for (;;) {
    size_t got = 0;
    while (got < sizeof(limbs)) {
      ssize_t n = getrandom(buf + got, sizeof(limbs) - got, 0);
      if (n < 0) {
        if (errno == EINTR) continue;
        explicit_bzero(limbs, sizeof(limbs));
        throw std::runtime_error(std::string("getrandom failed: ") + strerror(errno));
      }
      got += size_t(n);
    }
    limbs[3] &= 0x3fffffffffffffffULL;
    bool zero = (limbs[0] | limbs[1] | limbs[2] | limbs[3]) == 0;
    if (!zero && lessThanR(limbs)) break;
  }
  memcpy(out.v, limbs, N8);
  explicit_bzero(limbs, sizeof(limbs));
}

uint8_t *bytes(FrElement &e) { return reinterpret_cast<uint8_t *>(e.v); }

std::string g1Json(G1Point &p) {
  G1PointAffine a;
  Engine::engine.g1.copy(a, p);
  auto &f = Engine::engine.f1;
  return "[\"" + f.toString(a.x) + "\",\"" + f.toString(a.y) + "\",\"1\"]";
}

std::string g2Json(G2Point &p) {
  G2PointAffine a;
  Engine::engine.g2.copy(a, p);
  auto &f = Engine::engine.f1;
  return "[[\"" + f.toString(a.x.a) + "\",\"" + f.toString(a.x.b) + "\"],[\"" + f.toString(a.y.a) + "\",\"" + f.toString(a.y.b) +
         "\"],[\"1\",\"0\"]]";
}

// Zeroes the given memory when it goes out of scope, however the scope is left.
class Wipe {
 public:
  Wipe(std::initializer_list<std::pair<void *, size_t>> regions) : regions(regions) {}
  ~Wipe() {
    for (auto &region : regions) explicit_bzero(region.first, region.second);
  }
  Wipe(const Wipe &) = delete;
  Wipe &operator=(const Wipe &) = delete;

 private:
  std::vector<std::pair<void *, size_t>> regions;
};

class Prover {
 public:
  Prover(ProvingKey &key, unsigned threads) : key(key), threads(threads), fft(uint64_t(key.domainSize) * 2, threads) {}

  std::string prove(std::vector<uint8_t> &wtnsBytes) {
    BinFile wtns(wtnsBytes, "wtns", 2);
    const uint8_t *header = wtns.section(1, 4 + N8 + 4);
    uint32_t n8;
    memcpy(&n8, header, 4);
    if (n8 != N8 || !equalsPrime(header + 4, BN254_R)) throw Refusal("witness is not over BN254's scalar field");
    uint32_t nVars;
    memcpy(&nVars, header + 4 + N8, 4);
    if (nVars != key.nVars) throw Refusal("witness has " + std::to_string(nVars) + " signals, the key " + std::to_string(key.nVars));
    uint8_t *w = const_cast<uint8_t *>(wtns.section(2, uint64_t(nVars) * N8));
    const FrElement *witness = reinterpret_cast<const FrElement *>(w);
    // Signal 0 is the constant 1 of every R1CS witness; signals at or above r would be reduced silently by the
    // arithmetic below and by the multiexps.
    if (witness[0].v[0] != 1 || witness[0].v[1] != 0 || witness[0].v[2] != 0 || witness[0].v[3] != 0) throw Refusal("witness signal 0 is not 1");
    for (uint32_t i = 0; i < nVars; i++) {
      if (!lessThanR(witness[i].v)) throw Refusal("witness value out of the field");
    }

    auto &E = Engine::engine;
    uint64_t n = key.domainSize;
    std::vector<FrElement> a(n), b(n), c(n);
    FrElement term, r, s, rs;
    // Everything here derives from the witness (the note's secrets) or unblinds the proof: wiped on every way out.
    // (The witness itself is wiped by the caller, which owns its buffer.)
    Wipe wipe({{a.data(), n * sizeof(FrElement)}, {b.data(), n * sizeof(FrElement)}, {c.data(), n * sizeof(FrElement)},
               {&term, sizeof term}, {&r, sizeof r}, {&s, sizeof s}, {&rs, sizeof rs}});
    for (uint64_t i = 0; i < n; i++) {
      E.fr.copy(a[i], E.fr.zero());
      E.fr.copy(b[i], E.fr.zero());
    }
    for (uint32_t i = 0; i < key.nCoefs; i++) {
      Coef coef;
      memcpy(&coef, &key.coefs[i], sizeof coef);
      E.fr.mul(term, coef.value, witness[coef.signal]);
      std::vector<FrElement> &target = coef.matrix == 0 ? a : b;
      E.fr.add(target[coef.constraint], target[coef.constraint], term);
    }
    for (uint64_t i = 0; i < n; i++) E.fr.mul(c[i], a[i], b[i]);

    // Evaluations on the domain -> coefficients -> evaluations on the odd coset w_2n·<w_n>.
    const FrElement &shift = fft.root(key.domainPower + 1, 1);
    for (std::vector<FrElement> *v : {&a, &b, &c}) {
      fft.ifft(v->data(), n);
      FrElement power;
      E.fr.copy(power, E.fr.one());
      for (uint64_t i = 0; i < n; i++) {
        E.fr.mul((*v)[i], (*v)[i], power);
        E.fr.mul(power, power, shift);
      }
      fft.fft(v->data(), n);
    }
    for (uint64_t i = 0; i < n; i++) {
      E.fr.mul(a[i], a[i], b[i]);
      E.fr.sub(a[i], a[i], c[i]);
      E.fr.fromMontgomery(a[i], a[i]);
    }

    G1Point piA, piB1, piC, piH;
    G2Point piB;
    E.g1.multiMulByScalar(piA, const_cast<G1PointAffine *>(key.pointsA), w, N8, key.nVars, threads);
    E.g1.multiMulByScalar(piB1, const_cast<G1PointAffine *>(key.pointsB1), w, N8, key.nVars, threads);
    E.g2.multiMulByScalar(piB, const_cast<G2PointAffine *>(key.pointsB2), w, N8, key.nVars, threads);
    E.g1.multiMulByScalar(piC, const_cast<G1PointAffine *>(key.pointsC), w + (key.nPublic + 1) * N8, N8, key.nVars - key.nPublic - 1, threads);
    E.g1.multiMulByScalar(piH, const_cast<G1PointAffine *>(key.pointsH), reinterpret_cast<uint8_t *>(a.data()), N8, n, threads);

    randomScalar(r);
    randomScalar(s);
    E.fr.toMontgomery(term, r);
    E.fr.toMontgomery(rs, s);
    E.fr.mul(rs, term, rs);
    E.fr.fromMontgomery(rs, rs);

    G1Point p;
    G1PointAffine &alpha1 = const_cast<G1PointAffine &>(*key.alpha1);
    G1PointAffine &beta1 = const_cast<G1PointAffine &>(*key.beta1);
    G1PointAffine &delta1 = const_cast<G1PointAffine &>(*key.delta1);
    G2PointAffine &beta2 = const_cast<G2PointAffine &>(*key.beta2);
    G2PointAffine &delta2 = const_cast<G2PointAffine &>(*key.delta2);

    E.g1.add(piA, piA, alpha1);
    E.g1.mulByScalar(p, delta1, bytes(r), N8);
    E.g1.add(piA, piA, p);

    G2Point q;
    E.g2.add(piB, piB, beta2);
    E.g2.mulByScalar(q, delta2, bytes(s), N8);
    E.g2.add(piB, piB, q);

    E.g1.add(piB1, piB1, beta1);
    E.g1.mulByScalar(p, delta1, bytes(s), N8);
    E.g1.add(piB1, piB1, p);

    E.g1.add(piC, piC, piH);
    E.g1.mulByScalar(p, piA, bytes(s), N8);
    E.g1.add(piC, piC, p);
    E.g1.mulByScalar(p, piB1, bytes(r), N8);
    E.g1.add(piC, piC, p);
    E.g1.mulByScalar(p, delta1, bytes(rs), N8);
    E.g1.sub(piC, piC, p);

    return "{\"pi_a\":" + g1Json(piA) + ",\"pi_b\":" + g2Json(piB) + ",\"pi_c\":" + g1Json(piC) + "}";
  }

 private:
  ProvingKey &key;
  unsigned threads;
  FFT<RawFr> fft;
};

bool readAll(void *buf, size_t len) {
  uint8_t *p = static_cast<uint8_t *>(buf);
  while (len > 0) {
    ssize_t n = read(0, p, len);
    if (n == 0) return false;
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    len -= size_t(n);
  }
  return true;
}

void writeFrame(char tag, const std::string &payload) {
  uint8_t head[9];
  head[0] = uint8_t(tag);
  uint64_t len = payload.size();
  memcpy(head + 1, &len, 8);
  std::string out(reinterpret_cast<char *>(head), 9);
  out += payload;
  const char *p = out.data();
  size_t left = out.size();
  while (left > 0) {
    ssize_t n = write(1, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      exit(3);
    }
    p += n;
    left -= size_t(n);
  }
}

// A proving key is tens of MiB (the withdraw circuit's 17 MiB); a witness is its signals, 32 bytes each, plus headers.
const uint64_t MAX_KEY_FRAME = uint64_t(256) << 20;
const uint64_t WTNS_HEADERS = 4096;

}  // namespace

int main(int argc, char **argv) {
  // Keep the witness out of core dumps and other processes' reach (ptrace, /proc/<pid>/mem).
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  struct rlimit noCore = {0, 0};
  setrlimit(RLIMIT_CORE, &noCore);

  unsigned threads = 1;
  for (int i = 1; i + 1 < argc; i++) {
    if (std::string(argv[i]) == "--threads") threads = unsigned(std::max(1, atoi(argv[i + 1])));
  }
  omp_set_num_threads(int(threads));

  ProvingKey *key = nullptr;
  Prover *prover = nullptr;
  for (;;) {
    uint8_t head[9];
    if (!readAll(head, sizeof head)) return 0;  // stdin closed: the service is done with us
    uint64_t len;
    memcpy(&len, head + 1, 8);
    uint64_t limit = head[0] == 'W' && key ? uint64_t(key->nVars) * N8 + WTNS_HEADERS : MAX_KEY_FRAME;
    if (len > limit) {
      // The frame cannot be skipped without reading it: say why and end.
      writeFrame('E', "frame of " + std::to_string(len) + " bytes refused (at most " + std::to_string(limit) + ")");
      return 2;
    }
    std::vector<uint8_t> payload;
    try {
      payload.resize(len);
    } catch (const std::bad_alloc &) {
      writeFrame('E', "out of memory for a frame of " + std::to_string(len) + " bytes");
      return 2;
    }
    bool complete = readAll(payload.data(), len);
    if (!complete) {
      explicit_bzero(payload.data(), payload.size());
      return 0;
    }
    try {
      if (head[0] == 'K') {
        if (key) throw Refusal("the proving key was already loaded");
        key = new ProvingKey(std::move(payload));
        prover = new Prover(*key, threads);
        writeFrame('O', "{\"nVars\":" + std::to_string(key->nVars) + ",\"nPublic\":" + std::to_string(key->nPublic) +
                            ",\"domainSize\":" + std::to_string(key->domainSize) + "}");
      } else if (head[0] == 'W') {
        if (!prover) throw Refusal("no proving key loaded");
        std::string proof;
        try {
          proof = prover->prove(payload);
        } catch (...) {
          explicit_bzero(payload.data(), payload.size());
          throw;
        }
        explicit_bzero(payload.data(), payload.size());
        writeFrame('O', proof);
      } else {
        throw Refusal("unknown request");
      }
    } catch (const std::exception &e) {
      writeFrame('E', e.what());
    }
  }
}
