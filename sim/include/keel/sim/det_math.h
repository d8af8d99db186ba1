// Deterministic elementary functions: sin, cos, tan, atan, atan2, asin, acos, exp, log, pow,
// and the quaternion helpers game code needs (axis-angle, rotation vectors, angles, slerp).
//
// Why: libm is not the same library on every platform (glibc, musl, Apple, MSVC and their
// versions round differently), so any libm transcendental call in code that steps a world
// would break "same inputs, any platform -> same bits" (docs/determinism.md).
// Everything here is built from IEEE-754 +, -, *, /, sqrt (all correctly rounded), exact
// integer conversions and bit manipulation, evaluated in an explicit order. There is no
// long double, no std::fma and no call into libm, so the results are bit-identical on every
// compiler and CPU that implements IEEE binary32/binary64 with FLT_EVAL_METHOD == 0 (x86-64
// SSE2, aarch64), provided the file is compiled with -ffp-contract=off and without
// -ffast-math, as the whole project is.
//
// How:
// - sin/cos/tan reduce the argument modulo pi/2 with a three-constant Cody-Waite split for
//   |x| < 1.5e6 and an exact integer (Payne-Hanek) reduction against 1280 bits of 2/pi
//   beyond (and for the rare arguments within 2^-33 of a multiple of pi/2), carrying the
//   reduced argument as a double-double; then degree-15 (sin) and degree-16 (cos)
//   polynomials on [-pi/4, pi/4].
// - atan uses atan(x) = atan(c) + atan((x - c) / (1 + x c)) with c = i/8, and 1/x above 1.
//   atan2, asin and acos are built on it (asin x = atan2(x, sqrt((1-x)(1+x)))).
// - exp: x = k ln2 + r with a two-constant ln2 split, a degree-12 polynomial for e^r.
// - log: x = 2^e m, m in [sqrt(1/2), sqrt(2)), log m = 2 atanh(s), s = (m-1)/(m+1).
// The polynomial coefficients are Chebyshev fits computed with mpmath at 80 digits, rounded
// to double; the constants (pi/2, ln2, atan(i/8) as hi+lo pairs, the bits of 2/pi) too.
//
// Accuracy (measured against glibc and the identities in tests/sim/det_math_test.cpp):
// - float functions are computed in double and rounded once: within 1 ulp of the exact
//   result (almost always correctly rounded), for every finite input. sin/cos/tan keep that
//   accuracy for arguments of any size, not only up to 1e5 rad.
// - double functions: sin, cos, atan, atan2, exp, log within 2 ulp; tan, asin, acos within
//   3 ulp (every finite input). Measured against glibc: 1 ulp for all but tan, asin and
//   acos (2 ulp).
// - pow (float only) is exp(y log|x|) in double: within 1 ulp where the result is a normal
//   float.
// - Special values follow C99 Annex F: NaN in -> NaN out; sin/cos/tan(+-inf) = NaN;
//   atan2 handles signed zeros and infinities like the C library; asin/acos outside [-1, 1]
//   = NaN; log(0) = -inf, log(x < 0) = NaN; exp overflows to +inf and underflows to +0.
//   Signed zero is kept where C keeps it (sin(-0) = -0, atan(-0) = -0, asin(-0) = -0).
#pragma once

#include <keel/sim/math.h>

namespace keel::sim::dmath {

inline constexpr float kPi = 3.14159265358979323846f;
inline constexpr float kHalfPi = 1.57079632679489661923f;
inline constexpr float kTwoPi = 6.28318530717958647692f;
inline constexpr double kPiD = 3.14159265358979323846;
inline constexpr double kHalfPiD = 1.57079632679489661923;
inline constexpr double kTwoPiD = 6.28318530717958647692;

/// Both the sine and the cosine of one argument (one range reduction for the two).
template <class T>
struct SinCos {
  T sin;
  T cos;
};

// ---- float ---------------------------------------------------------------------------

/// Sine, within 1 ulp for every finite x.
float sin(float x);
/// Cosine, within 1 ulp for every finite x.
float cos(float x);
/// Sine and cosine of x; bit-identical to {sin(x), cos(x)}.
SinCos<float> sincos(float x);
/// Tangent, within 1 ulp for every finite x.
float tan(float x);
/// Arc tangent in [-pi/2, pi/2], within 1 ulp.
float atan(float x);
/// Angle of the vector (x, y) in [-pi, pi], within 1 ulp; C99 rules for zeros and infinities
/// (atan2(+0, -0) = +pi, atan2(-0, +0) = -0, atan2(0, 0) = 0, ...).
float atan2(float y, float x);
/// Arc sine in [-pi/2, pi/2] for x in [-1, 1] (NaN outside), within 1 ulp.
float asin(float x);
/// Arc cosine in [0, pi] for x in [-1, 1] (NaN outside), within 1 ulp.
float acos(float x);
/// e^x, within 1 ulp; +inf above ~88.72, +0 below ~-103.97 (subnormals in between).
float exp(float x);
/// Natural logarithm, within 1 ulp; -inf at +-0, NaN below 0.
float log(float x);
/// x^y as exp(y log|x|) evaluated in double; within 1 ulp for normal results. x < 0 needs an
/// integer y (else NaN); pow(x, +-0) = 1 and pow(1, y) = 1 for any y, even NaN;
/// pow(+-0, y < 0) = +-inf and pow(+-0, y > 0) = +-0 (the sign kept only for odd integer y).
float pow(float x, float y);

// ---- double --------------------------------------------------------------------------

/// Sine, within 2 ulp for every finite x.
double sin(double x);
/// Cosine, within 2 ulp for every finite x.
double cos(double x);
/// Sine and cosine of x; bit-identical to {sin(x), cos(x)}.
SinCos<double> sincos(double x);
/// Tangent, within 3 ulp for every finite x.
double tan(double x);
/// Arc tangent, within 2 ulp.
double atan(double x);
/// Angle of (x, y) in [-pi, pi], within 2 ulp; C99 rules for zeros and infinities.
double atan2(double y, double x);
/// Arc sine (NaN outside [-1, 1]), within 3 ulp.
double asin(double x);
/// Arc cosine (NaN outside [-1, 1]), within 3 ulp.
double acos(double x);
/// e^x, within 2 ulp; +inf above ~709.78, +0 below ~-745.13.
double exp(double x);
/// Natural logarithm, within 2 ulp; -inf at +-0, NaN below 0.
double log(double x);

// ---- rotations -----------------------------------------------------------------------

/// Rotation by `angle` radians about `unit_axis` (right-handed; the axis must be unit
/// length, it is not normalised here): (axis sin(angle/2), cos(angle/2)).
Quat axis_angle(Vec3 unit_axis, float angle);

/// Rotation by |v| radians about v / |v| (the exponential map); identity for v = 0.
/// Accurate for small |v| as well (no division by a tiny length).
Quat from_rotation_vector(Vec3 v);

/// Inverse of from_rotation_vector for a unit quaternion: axis * angle with the angle in
/// [0, pi] (q and -q give the same vector).
Vec3 to_rotation_vector(Quat q);

/// Rotation angle of a unit quaternion, in [0, pi] (q and -q give the same angle).
/// Uses atan2(|xyz|, |w|), so it is accurate for small angles, unlike 2 acos(w).
float quat_angle(Quat q);

/// Angle of the rotation that takes a to b (both unit), in [0, pi].
float angle_between_quats(Quat a, Quat b);

/// Spherical linear interpolation along the shorter arc: t = 0 gives a, t = 1 gives b
/// (up to sign). Falls back to a normalised lerp when the two are within ~1e-3 rad.
Quat slerp(Quat a, Quat b, float t);

}  // namespace keel::sim::dmath
