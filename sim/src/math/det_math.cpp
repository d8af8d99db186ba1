// Deterministic elementary functions (see det_math.h for the contract and error bounds).
//
// Every float function is evaluated in double and rounded once at the end; the double
// functions carry a small correction term (a double-double "lo" part) where the final
// rounding would otherwise cost accuracy. Only +, -, *, /, sqrt, exact integer conversions
// and bit manipulation are used. The order of every operation is written out; the build
// must not contract a*b+c into an fma (-ffp-contract=off, set for the whole project in the
// top-level CMakeLists.txt) because that changes the bits; GoldenFloatBits in
// tests/sim/det_math_test.cpp fails if it happens.
#include <keel/sim/det_math.h>

#include <keel/base/bit_copy.h>

#include <bit>
#include <cfloat>
#include <cmath>  // std::sqrt only (correctly rounded by IEEE 754)
#include <cstdint>
#include <cstring>
#include <limits>

#if defined(__clang__)
#pragma clang fp contract(off)
#endif

static_assert(std::numeric_limits<double>::is_iec559 && std::numeric_limits<float>::is_iec559,
              "keel::sim::dmath needs IEEE 754 binary32/binary64");
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD != 0
#error "keel::sim::dmath needs FLT_EVAL_METHOD == 0 (no x87 excess precision)"
#endif

namespace keel::sim::dmath {
namespace {

using u64 = std::uint64_t;
using i64 = std::int64_t;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr u64 kSignBit = 0x8000000000000000ull;

// pi/2, pi and pi/4 as hi + lo (lo = the next 53 bits).
constexpr double kHalfPiHi = 0x1.921fb54442d18p+0;
constexpr double kHalfPiLo = 0x1.1a62633145c07p-54;
constexpr double kPiHi = 0x1.921fb54442d18p+1;
constexpr double kPiLo = 0x1.1a62633145c07p-53;
constexpr double kQuarterPi = 0x1.921fb54442d18p-1;
constexpr double kThreeQuarterPi = 0x1.2d97c7f3321d2p+1;
constexpr double kTwoOverPi = 0x1.45f306dc9c883p-1;

// Cody-Waite split of pi/2: P1 and P2 have 33 significant bits, so k * P1 and k * P2 are
// exact for |k| < 2^20; P1 + P2 + P3 matches pi/2 to about 2^-123.
constexpr double kPio2P1 = 0x1.921fb54400000p+0;
constexpr double kPio2P2 = 0x1.0b4611a600000p-34;
constexpr double kPio2P3 = 0x1.3198a2e037073p-69;
// The Cody-Waite path is used below this; |x| * 2/pi < 2^20 there.
constexpr double kMediumLimit = 1.5e6;

// The first 1280 bits of 2/pi after the binary point, most significant first (computed with
// mpmath). Used for exact reduction of huge arguments.
constexpr u64 kTwoOverPiBits[20] = {
    0xa2f9836e4e441529, 0xfc2757d1f534ddc0, 0xdb6295993c439041, 0xfe5163abdebbc561,
    0xb7246e3a424dd2e0, 0x06492eea09d1921c, 0xfe1deb1cb129a73e, 0xe88235f52ebb4484,
    0xe99c7026b45f7e41, 0x3991d639835339f4, 0x9c845f8bbdf9283b, 0x1ff897ffde05980f,
    0xef2f118b5a0a6d1f, 0x6d367ecf27cb09b7, 0x4f463f669e5fea2d, 0x7527bac7ebe5f17b,
    0x3d0739f78a5292ea, 0x6bfb5fb11f8d5d08, 0x56033046fc7b6bab, 0xf0cfbc209af4361d,
};

// ln 2 split for exp/log: kLn2Hi has 41 significant bits, so k * kLn2Hi is exact for
// |k| < 2^12.
constexpr double kLn2Hi = 0x1.62e42fefa3800p-1;
constexpr double kLn2Lo = 0x1.ef35793c76730p-45;
constexpr double kInvLn2 = 0x1.71547652b82fep+0;

// sin r = r + r z S(z), z = r^2, |r| <= pi/4 (fit on a 0.2% wider interval).
constexpr double kSinCoef[7] = {
    -0x1.5555555555555p-3, 0x1.1111111111110p-7,  -0x1.a01a01a019914p-13, 0x1.71de3a545c467p-19,
    -0x1.ae64540b4d1f5p-26, 0x1.6121792308a6bp-33, -0x1.ab145a3afb4cdp-41,
};
// cos r = 1 - z/2 + z^2 C(z).
constexpr double kCosCoef[7] = {
    0x1.5555555555555p-5,  -0x1.6c16c16c16c16p-10, 0x1.a01a01a019cfbp-16, -0x1.27e4fb7710ebap-22,
    0x1.1eed8de845200p-29, -0x1.9394b4cb659aep-37, 0x1.ab754378b1589p-45,
};
// atan t = t + t z A(z), |t| <= 1/16.
constexpr double kAtanCoef[6] = {
    -0x1.5555555555555p-2, 0x1.999999999994dp-3,  -0x1.249249245a669p-3,
    0x1.c71c6feaeee60p-4,  -0x1.745981dd28081p-4, 0x1.37e423f272160p-4,
};
// atan(i/16) for i = 0..16 as hi + lo.
constexpr double kAtanTable[17][2] = {
    {0x0.0p+0, 0x0.0p+0},
    {0x1.ff55bb72cfdeap-5, -0x1.c934d86d23f1dp-60},
    {0x1.fd5ba9aac2f6ep-4, -0x1.cd37686760c17p-59},
    {0x1.7b97b4bce5b02p-3, 0x1.347b0b4f881cap-58},
    {0x1.f5b75f92c80ddp-3, 0x1.8ab6e3cf7afbdp-57},
    {0x1.362773707ebccp-2, -0x1.963a544b672d8p-57},
    {0x1.6f61941e4def1p-2, -0x1.c63aae6f6e918p-56},
    {0x1.a64eec3cc23fdp-2, -0x1.24dec1b50b7ffp-56},
    {0x1.dac670561bb4fp-2, 0x1.a2b7f222f65e2p-56},
    {0x1.0657e94db30d0p-1, -0x1.d5b495f6349e6p-56},
    {0x1.1e00babdefeb4p-1, -0x1.928df287a668fp-58},
    {0x1.345f01cce37bbp-1, 0x1.1021137c71102p-55},
    {0x1.4978fa3269ee1p-1, 0x1.2419a87f2a458p-56},
    {0x1.5d58987169b18p-1, 0x1.0028e4bc5e7cap-57},
    {0x1.700a7c5784634p-1, -0x1.8c34d25aadef6p-56},
    {0x1.819d0b7158a4dp-1, -0x1.bf76229d3b917p-56},
    {0x1.921fb54442d18p-1, 0x1.1a62633145c07p-55},
};
// e^r = 1 + r + r^2 E(r), |r| <= ln2 / 2.
constexpr double kExpCoef[11] = {
    0x1.0000000000000p-1,  0x1.5555555555557p-3,  0x1.5555555555556p-5, 0x1.111111111009cp-7,
    0x1.6c16c16c162b0p-10, 0x1.a01a01ac0a9eep-13, 0x1.a01a01a6ec522p-16, 0x1.71de01c3fc936p-19,
    0x1.27e4db25ce3adp-22, 0x1.af4ecd2129492p-26, 0x1.1f7385560be05p-29,
};
// log((1+s)/(1-s)) = 2s + s z G(z), z = s^2, |s| <= (sqrt2 - 1)/(sqrt2 + 1).
constexpr double kLogCoef[8] = {
    0x1.5555555555555p-1, 0x1.9999999999a3ap-2, 0x1.2492492476765p-2, 0x1.c71c7201f207cp-3,
    0x1.745cf8c4c7bcap-3, 0x1.3b1c42e3df02cp-3, 0x1.0fbd2bafa02d6p-3, 0x1.0c1263e1bac13p-3,
};

template <std::size_t N>
double horner(const double (&c)[N], double z) {
  double p = c[N - 1];
  for (std::size_t i = N - 1; i-- > 0;) {
    p = c[i] + z * p;
  }
  return p;
}

u64 bits_of(double x) { return keel::bit_copy<u64>(x); }
double from_bits(u64 b) { return keel::bit_copy<double>(b); }
double abs_of(double x) { return from_bits(bits_of(x) & ~kSignBit); }
bool sign_of(double x) { return (bits_of(x) & kSignBit) != 0; }
double copy_sign(double mag, double sgn) {
  return from_bits((bits_of(mag) & ~kSignBit) | (bits_of(sgn) & kSignBit));
}
bool is_nan(double x) { return (bits_of(x) & ~kSignBit) > 0x7ff0000000000000ull; }
bool is_finite(double x) { return (bits_of(x) & ~kSignBit) < 0x7ff0000000000000ull; }

/// 2^e for e in [-1022, 1023], built from its bits.
double pow2(int e) { return from_bits(static_cast<u64>(e + 1023) << 52); }

/// Nearest integer (halves away from zero) of v, for |v| < 2^52. The exact rounding rule does
/// not matter to the callers (their polynomials cover the reduced range with a margin), only
/// that it is the same everywhere.
double round_near(double v) {
  const i64 n = static_cast<i64>(v >= 0.0 ? v + 0.5 : v - 0.5);
  return static_cast<double>(n);
}

/// a + b = s + e exactly (Knuth's TwoSum; no ordering requirement).
struct Pair {
  double hi;
  double lo;
};
Pair two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  const double e = (a - (s - bb)) + (b - bb);
  return {s, e};
}

/// a * b = p + e exactly (Dekker's product with Veltkamp splitting; no fma). Needs
/// |a|, |b| < 2^995 so the split cannot overflow.
Pair two_prod(double a, double b) {
  constexpr double kSplit = 134217729.0;  // 2^27 + 1
  const double ca = kSplit * a;
  const double a_hi = ca - (ca - a);
  const double a_lo = a - a_hi;
  const double cb = kSplit * b;
  const double b_hi = cb - (cb - b);
  const double b_lo = b - b_hi;
  const double p = a * b;
  const double e = (((a_hi * b_hi - p) + a_hi * b_lo) + a_lo * b_hi) + a_lo * b_lo;
  return {p, e};
}

/// x = q * pi/2 + (hi + lo), |hi + lo| <= ~pi/4.
struct Reduced {
  int q;
  double hi;
  double lo;
};

/// 64 x 64 -> 128-bit product without compiler extensions.
void mul_64(u64 a, u64 b, u64& hi, u64& lo) {
  const u64 a0 = a & 0xffffffffull, a1 = a >> 32;
  const u64 b0 = b & 0xffffffffull, b1 = b >> 32;
  const u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
  const u64 mid = (p00 >> 32) + (p01 & 0xffffffffull) + (p10 & 0xffffffffull);
  lo = (p00 & 0xffffffffull) | (mid << 32);
  hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/// Adds v at limb i of a little-endian multi-limb integer, propagating the carry.
void add_at(u64* limbs, int count, int i, u64 v) {
  for (; i < count && v != 0; ++i) {
    const u64 before = limbs[i];
    limbs[i] = before + v;
    v = limbs[i] < before ? 1 : 0;
  }
}

/// 64 bits of a little-endian multi-limb integer starting at bit `lsb` (zeros above the top).
u64 bits_at(const u64* limbs, int count, int lsb) {
  const int i = lsb / 64, off = lsb % 64;
  const u64 low = i < count ? limbs[i] : 0;
  const u64 high = i + 1 < count ? limbs[i + 1] : 0;
  return off == 0 ? low : (low >> off) | (high << (64 - off));
}

/// Exact reduction of a finite |x| > pi/4 (Payne-Hanek): x * 2/pi is computed as a
/// 320-bit integer product of x's 53-bit mantissa with a 256-bit window of 2/pi's bits, which
/// gives the quadrant and 128 bits of the fraction; the bits of 2/pi before the window
/// contribute only multiples of 4 and the ones after it less than 2^-138.
Reduced reduce_large(double x) {
  const u64 b = bits_of(x);
  const u64 mant = (b & 0x000fffffffffffffull) | 0x0010000000000000ull;
  const int e = static_cast<int>((b >> 52) & 0x7ff) - 1075;  // |x| = mant * 2^e, e >= -53
  const int w0 = e >= 2 ? (e - 2) / 64 : 0;
  u64 prod[5] = {0, 0, 0, 0, 0};
  for (int j = 0; j < 4; ++j) {  // limb j (least significant first) <- word w0 + 3 - j
    u64 hi = 0, lo = 0;
    mul_64(mant, kTwoOverPiBits[w0 + 3 - j], hi, lo);
    add_at(prod, 5, j, lo);
    add_at(prod, 5, j + 1, hi);
  }
  // The binary point of |x| * 2/pi sits `point` bits above the product's least significant bit.
  const int point = 64 * w0 + 256 - e;
  int q = static_cast<int>(bits_at(prod, 5, point) & 3u);
  u64 f_hi = bits_at(prod, 5, point - 64);
  u64 f_lo = bits_at(prod, 5, point - 128);
  bool negative = false;
  if ((f_hi >> 63) != 0) {  // fraction >= 1/2: round up and keep 1 - fraction, negated
    q = (q + 1) & 3;
    negative = true;
    f_lo = ~f_lo + 1;
    f_hi = ~f_hi + (f_lo == 0 ? 1 : 0);
  }
  Reduced out{q, 0.0, 0.0};
  if (f_hi != 0 || f_lo != 0) {
    const int lz = f_hi != 0 ? std::countl_zero(f_hi) : 64 + std::countl_zero(f_lo);
    if (lz >= 64) {
      f_hi = f_lo << (lz - 64);
      f_lo = 0;
    } else if (lz > 0) {
      f_hi = (f_hi << lz) | (f_lo >> (64 - lz));
      f_lo <<= lz;
    }
    // fraction = (top 53 bits) * 2^(-53-lz) + (next 53 bits) * 2^(-106-lz), both exact.
    const u64 top = f_hi >> 11;
    const u64 next = ((f_hi & 0x7ffull) << 42) | (f_lo >> 22);
    const double fh = static_cast<double>(static_cast<i64>(top)) * pow2(-53 - lz);
    const double fl = static_cast<double>(static_cast<i64>(next)) * pow2(-106 - lz);
    const Pair p = two_prod(fh, kHalfPiHi);
    const double tail = p.lo + (fh * kHalfPiLo + fl * kHalfPiHi);
    const Pair r = two_sum(p.hi, tail);
    out.hi = negative ? -r.hi : r.hi;
    out.lo = negative ? -r.lo : r.lo;
  }
  if (sign_of(x)) {
    out.q = (4 - out.q) & 3;
    out.hi = -out.hi;
    out.lo = -out.lo;
  }
  return out;
}

/// Reduces a finite x modulo pi/2.
Reduced reduce(double x) {
  const double ax = abs_of(x);
  if (ax <= kQuarterPi) {
    return {0, x, 0.0};
  }
  if (ax < kMediumLimit) {
    const double k = round_near(x * kTwoOverPi);
    const double r1 = x - k * kPio2P1;  // exact: k * P1 is exact and within 2x of x
    const Pair r2 = two_sum(r1, -(k * kPio2P2));
    const Pair r = two_sum(r2.hi, r2.lo - k * kPio2P3);
    // Within 2^-33 of a multiple of pi/2 the remaining constant error (~2^-98) could show;
    // such arguments take the exact path.
    if (abs_of(r.hi) >= 0x1p-33) {
      return {static_cast<int>(static_cast<i64>(k) & 3), r.hi, r.lo};
    }
  }
  return reduce_large(x);
}

/// sin(r + rr) for |r| <= ~pi/4, |rr| <= ulp(r).
double kernel_sin(double r, double rr) {
  const double z = r * r;
  const double s = horner(kSinCoef, z);
  return r + (rr * (1.0 - 0.5 * z) + (r * z) * s);
}

/// cos(r + rr) for |r| <= ~pi/4. 1 - z/2 is split so its rounding error is added back.
double kernel_cos(double r, double rr) {
  const double z = r * r;
  const double c = horner(kCosCoef, z);
  const double hz = 0.5 * z;
  const double w = 1.0 - hz;
  return w + (((1.0 - w) - hz) + ((z * z) * c - r * rr));
}

SinCos<double> sincos_reduced(const Reduced& red) {
  const double s = kernel_sin(red.hi, red.lo);
  const double c = kernel_cos(red.hi, red.lo);
  switch (red.q) {
    case 0: return {s, c};
    case 1: return {c, -s};
    case 2: return {-s, -c};
    default: return {-c, s};
  }
}

/// atan of u + ue for 0 <= u <= 1 (ue a small correction of u), as table value + rest.
Pair atan_unit(double u, double ue) {
  const int i = u < 0.0625 ? 0 : static_cast<int>(u * 16.0 + 0.5);
  const double c = static_cast<double>(i) * 0.0625;
  // u - c is exact (Sterbenz); |t| <= 1/16 for i = 0 and <= 1/32 otherwise.
  const double t = i == 0 ? u : (u - c) / (1.0 + u * c);
  const double z = t * t;
  const double p = (t * z) * horner(kAtanCoef, z);
  // d atan(t) / du = 1 / (1 + u^2).
  const double corr = ue / (1.0 + u * u);
  return {kAtanTable[i][0], t + (kAtanTable[i][1] + (p + corr))};
}

/// num / den (both > 0, num <= den) and the rounding error of the quotient, where the
/// error can be computed without overflow.
Pair quotient(double num, double den) {
  const double u = num / den;
  double ue = 0.0;
  if (den < 0x1p900 && den > 0x1p-900 && u > 0x1p-900) {
    const Pair p = two_prod(u, den);
    ue = ((num - p.hi) - p.lo) / den;
  }
  return {u, ue};
}

/// Angle of (den, num) for num, den > 0, finite, in (0, pi/2), as an unevaluated sum.
Pair atan_ratio(double num, double den) {
  if (num <= den) {
    const Pair q = quotient(num, den);
    return atan_unit(q.hi, q.lo);
  }
  const Pair q = quotient(den, num);
  const Pair a = atan_unit(q.hi, q.lo);
  const Pair s = two_sum(kHalfPiHi, -a.hi);  // pi/2 - atan(den/num)
  return {s.hi, (s.lo + kHalfPiLo) - a.lo};
}

/// Rounds a double to float with IEEE overflow to +-inf spelled out (a plain cast of an
/// out-of-range value is undefined behaviour in C++).
float narrow(double v) {
  constexpr double kOverflow = 0x1.ffffffp127;  // halfway between FLT_MAX and 2^128
  if (v >= kOverflow) return std::numeric_limits<float>::infinity();
  if (v <= -kOverflow) return -std::numeric_limits<float>::infinity();
  return static_cast<float>(v);
}

}  // namespace

// ---- double ----------------------------------------------------------------------------

SinCos<double> sincos(double x) {
  if (!is_finite(x)) return {x - x, x - x};
  if (abs_of(x) < 0x1p-27) return {x, 1.0};  // keeps sin(-0) = -0
  return sincos_reduced(reduce(x));
}

double sin(double x) { return sincos(x).sin; }

double cos(double x) { return sincos(x).cos; }

double tan(double x) {
  if (!is_finite(x)) return x - x;
  if (abs_of(x) < 0x1p-27) return x;
  const Reduced red = reduce(x);
  const double s = kernel_sin(red.hi, red.lo);
  const double c = kernel_cos(red.hi, red.lo);
  return (red.q & 1) == 0 ? s / c : -c / s;
}

double atan(double x) {
  if (is_nan(x)) return x + x;
  const double ax = abs_of(x);
  double r = 0.0;
  if (ax > 0x1p60) {
    r = kHalfPiHi;  // atan(x) = pi/2 - 1/x + ..., and 1/x < 2^-60
  } else if (ax <= 1.0) {
    const Pair a = atan_unit(ax, 0.0);
    r = a.hi + a.lo;
  } else {
    const Pair a = atan_ratio(ax, 1.0);
    r = a.hi + a.lo;
  }
  return copy_sign(r, x);
}

double atan2(double y, double x) {
  if (is_nan(x) || is_nan(y)) return x + y;
  const double ax = abs_of(x), ay = abs_of(y);
  const bool x_neg = sign_of(x);
  double r = 0.0;
  if (ay == 0.0) {
    r = x_neg ? kPiHi : 0.0;  // atan2(+-0, -0 or x < 0) = +-pi; atan2(+-0, +0 or x > 0) = +-0
  } else if (ax == 0.0 || (!is_finite(ay) && is_finite(ax))) {
    r = kHalfPiHi;
  } else if (!is_finite(ax)) {
    if (!is_finite(ay)) {
      r = x_neg ? kThreeQuarterPi : kQuarterPi;
    } else {
      r = x_neg ? kPiHi : 0.0;
    }
  } else {
    Pair a = atan_ratio(ay, ax);
    if (x_neg) {
      const Pair s = two_sum(kPiHi, -a.hi);
      a = {s.hi, (s.lo + kPiLo) - a.lo};
    }
    r = a.hi + a.lo;
  }
  return copy_sign(r, y);
}

double asin(double x) {
  if (is_nan(x)) return x + x;
  if (abs_of(x) > 1.0) return kNaN;
  return atan2(x, std::sqrt((1.0 - x) * (1.0 + x)));
}

double acos(double x) {
  if (is_nan(x)) return x + x;
  if (abs_of(x) > 1.0) return kNaN;
  return atan2(std::sqrt((1.0 - x) * (1.0 + x)), x);
}

double exp(double x) {
  if (is_nan(x)) return x + x;
  if (x > 709.8) return kInf;
  if (x < -745.2) return 0.0;
  if (abs_of(x) < 0x1p-54) return 1.0 + x;
  const double k = round_near(x * kInvLn2);  // |k| <= 1076
  const double hi = x - k * kLn2Hi;            // exact
  const double lo = k * kLn2Lo;
  const double r = hi - lo;
  const double rr = (hi - r) - lo;  // |hi| >= |lo|, so this is r's rounding error
  const double y = 1.0 + (r + (rr + (r * r) * horner(kExpCoef, r)));
  const int ki = static_cast<int>(k);
  if (ki > 1023) return (y * 2.0) * pow2(ki - 1);
  if (ki < -1021) return (y * pow2(ki + 600)) * pow2(-600);  // one rounding into subnormals
  return y * pow2(ki);
}

double log(double x) {
  if (is_nan(x)) return x + x;
  if (x == 0.0) return -kInf;
  if (x < 0.0) return kNaN;
  if (!is_finite(x)) return x;
  int e = 0;
  if (x < 0x1p-1022) {  // subnormal: scale into the normal range
    x *= 0x1p54;
    e = -54;
  }
  u64 b = bits_of(x);
  e += static_cast<int>(b >> 52) - 1023;
  b = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;  // m in [1, 2)
  double m = from_bits(b);
  if (m > 0x1.6a09e667f3bcdp+0) {  // sqrt(2): use m / 2 in [sqrt(1/2), 1)
    m *= 0.5;
    e += 1;
  }
  const double f = m - 1.0;  // exact
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double rz = z * horner(kLogCoef, z);
  const double hfsq = 0.5 * (f * f);
  const double dk = static_cast<double>(e);
  // log m = f - hfsq + s (hfsq + rz) (since 2s = f - s f); the small terms go first.
  return dk * kLn2Hi - ((hfsq - (s * (hfsq + rz) + dk * kLn2Lo)) - f);
}

// ---- float -----------------------------------------------------------------------------

float sin(float x) { return static_cast<float>(sin(static_cast<double>(x))); }
float cos(float x) { return static_cast<float>(cos(static_cast<double>(x))); }
SinCos<float> sincos(float x) {
  const SinCos<double> sc = sincos(static_cast<double>(x));
  return {static_cast<float>(sc.sin), static_cast<float>(sc.cos)};
}
float tan(float x) { return narrow(tan(static_cast<double>(x))); }
float atan(float x) { return static_cast<float>(atan(static_cast<double>(x))); }
float atan2(float y, float x) {
  return static_cast<float>(atan2(static_cast<double>(y), static_cast<double>(x)));
}
float asin(float x) { return static_cast<float>(asin(static_cast<double>(x))); }
float acos(float x) { return static_cast<float>(acos(static_cast<double>(x))); }
float exp(float x) { return narrow(exp(static_cast<double>(x))); }
float log(float x) { return static_cast<float>(log(static_cast<double>(x))); }

float pow(float x, float y) {
  const double dx = x, dy = y;
  if (dy == 0.0 || dx == 1.0) return 1.0f;
  if (is_nan(dx) || is_nan(dy)) return static_cast<float>(dx + dy);
  const double ax = abs_of(dx), ay = abs_of(dy);
  if (!is_finite(dy)) {
    if (ax == 1.0) return 1.0f;
    const bool grows = (ax > 1.0) == (dy > 0.0);
    return grows ? std::numeric_limits<float>::infinity() : 0.0f;
  }
  // y is finite here. Every float of magnitude >= 2^23 is an integer, and even from 2^24.
  bool integer = ay >= 0x1p23;
  bool odd = false;
  if (!integer) {
    const i64 n = static_cast<i64>(dy);  // truncation, |y| < 2^23
    integer = static_cast<double>(n) == dy;
    odd = integer && (n & 1) != 0;
  } else if (ay < 0x1p24) {
    odd = (static_cast<i64>(dy) & 1) != 0;
  }
  const bool negate = sign_of(dx) && odd;
  double mag = 0.0;
  if (ax == 0.0) {
    mag = dy < 0.0 ? kInf : 0.0;
  } else if (!is_finite(ax)) {
    mag = dy < 0.0 ? 0.0 : kInf;
  } else {
    if (dx < 0.0 && !integer) return std::numeric_limits<float>::quiet_NaN();
    mag = exp(dy * log(ax));
  }
  return narrow(negate ? -mag : mag);
}

// ---- rotations -------------------------------------------------------------------------

Quat axis_angle(Vec3 unit_axis, float angle) {
  const SinCos<float> sc = sincos(0.5f * angle);
  return Quat(sc.cos, unit_axis.x * sc.sin, unit_axis.y * sc.sin, unit_axis.z * sc.sin);
}

Quat from_rotation_vector(Vec3 v) {
  const float theta2 = v.x * v.x + v.y * v.y + v.z * v.z;
  if (theta2 < 1e-8f) {
    // sin(t/2)/t = 1/2 - t^2/48 + ..., cos(t/2) = 1 - t^2/8 + ...: exact to float precision.
    const float k = 0.5f - theta2 * (1.0f / 48.0f);
    return Quat(1.0f - theta2 * 0.125f, v.x * k, v.y * k, v.z * k);
  }
  const float theta = std::sqrt(theta2);
  const SinCos<float> sc = sincos(0.5f * theta);
  const float k = sc.sin / theta;
  return Quat(sc.cos, v.x * k, v.y * k, v.z * k);
}

Vec3 to_rotation_vector(Quat q) {
  const float sgn = q.w < 0.0f ? -1.0f : 1.0f;  // the same rotation with w >= 0
  const float x = q.x * sgn, y = q.y * sgn, z = q.z * sgn, w = q.w * sgn;
  const float s = std::sqrt(x * x + y * y + z * z);
  if (s == 0.0f) return Vec3(0.0f);
  const float angle = 2.0f * atan2(s, w);
  const float k = angle / s;
  return Vec3(x * k, y * k, z * k);
}

float quat_angle(Quat q) {
  const float s = std::sqrt(q.x * q.x + q.y * q.y + q.z * q.z);
  const float w = q.w < 0.0f ? -q.w : q.w;
  return 2.0f * atan2(s, w);
}

float angle_between_quats(Quat a, Quat b) {
  // conj(a) * b, written out so its operation order is fixed here.
  const float w = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z;
  const float x = a.w * b.x - a.x * b.w - a.y * b.z + a.z * b.y;
  const float y = a.w * b.y - a.y * b.w - a.z * b.x + a.x * b.z;
  const float z = a.w * b.z - a.z * b.w - a.x * b.y + a.y * b.x;
  return quat_angle(Quat(w, x, y, z));
}

Quat slerp(Quat a, Quat b, float t) {
  float d = a.w * b.w + a.x * b.x + a.y * b.y + a.z * b.z;
  if (d < 0.0f) {  // take the shorter arc
    b = Quat(-b.w, -b.x, -b.y, -b.z);
    d = -d;
  }
  if (d > 1.0f) d = 1.0f;
  const float sin_theta = std::sqrt((1.0f - d) * (1.0f + d));
  float wa = 1.0f - t, wb = t;
  if (sin_theta > 1e-3f) {
    const float theta = atan2(sin_theta, d);
    wa = sin(wa * theta) / sin_theta;
    wb = sin(wb * theta) / sin_theta;
  }
  Quat r(a.w * wa + b.w * wb, a.x * wa + b.x * wb, a.y * wa + b.y * wb, a.z * wa + b.z * wb);
  if (sin_theta <= 1e-3f) {  // normalised lerp
    const float len = std::sqrt(r.w * r.w + r.x * r.x + r.y * r.y + r.z * r.z);
    r = Quat(r.w / len, r.x / len, r.y / len, r.z / len);
  }
  return r;
}

}  // namespace keel::sim::dmath
