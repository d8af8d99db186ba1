// Accuracy and determinism tests for keel::sim::dmath (sim/include/keel/sim/det_math.h).
//
// libm is the reference here (and only here): glibc's double sin, cos, tan, atan, atan2,
// asin, acos, exp, log and pow are within 1 ulp, so a float result of ours is checked
// against the libm double result rounded to float, and a double result of ours against the
// libm double result. The golden bit patterns at the end were produced by this
// implementation (gcc 12 and clang 14, -O0/-O2/-O3 -march=native, all identical); a change
// to any of them means results changed on some platform or the implementation changed,
// and recorded hash chains would no longer replay.
#include <keel/sim/det_math.h>

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

namespace dm = keel::sim::dmath;
using keel::sim::Quat;
using keel::sim::Vec3;

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr float kInfF = std::numeric_limits<float>::infinity();
constexpr float kNaNF = std::numeric_limits<float>::quiet_NaN();
constexpr double kInfD = std::numeric_limits<double>::infinity();
constexpr double kNaND = std::numeric_limits<double>::quiet_NaN();

// Distance in units in the last place, via the monotone integer ordering of IEEE values.
int64_t ordered(float x) {
  const int32_t i = std::bit_cast<int32_t>(x);
  return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : i;
}
int64_t ordered(double x) {
  const int64_t i = std::bit_cast<int64_t>(x);
  return i < 0 ? INT64_MIN - i : i;
}
template <class T>
int64_t ulps(T a, T b) {
  if (std::isnan(a) && std::isnan(b)) return 0;
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<int64_t>::max();
  const int64_t d = ordered(a) - ordered(b);
  return d < 0 ? -d : d;
}

// Largest ulp error of f against ref over `count` evenly spaced points in [lo, hi] plus
// `count` random ones, in float (ref evaluated in double at the float argument).
template <class F, class R>
int64_t max_ulps_float(F f, R ref, double lo, double hi, int count, double* worst_x = nullptr) {
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> uniform(lo, hi);
  int64_t worst = 0;
  for (int i = 0; i < 2 * count; ++i) {
    const double t = i < count ? lo + (hi - lo) * i / (count - 1) : uniform(rng);
    const float x = static_cast<float>(t);
    const int64_t e = ulps(f(x), static_cast<float>(ref(static_cast<double>(x))));
    if (e > worst) {
      worst = e;
      if (worst_x != nullptr) *worst_x = x;
    }
  }
  return worst;
}

template <class F, class R>
int64_t max_ulps_double(F f, R ref, double lo, double hi, int count, double* worst_x = nullptr) {
  std::mt19937_64 rng(54321);
  std::uniform_real_distribution<double> uniform(lo, hi);
  int64_t worst = 0;
  for (int i = 0; i < 2 * count; ++i) {
    const double x = i < count ? lo + (hi - lo) * i / (count - 1) : uniform(rng);
    const int64_t e = ulps(f(x), ref(x));
    if (e > worst) {
      worst = e;
      if (worst_x != nullptr) *worst_x = x;
    }
  }
  return worst;
}

#define EXPECT_SAME_BITS(a, b) EXPECT_EQ(std::bit_cast<uint32_t>(a), std::bit_cast<uint32_t>(b))
#define EXPECT_SAME_BITS_D(a, b) EXPECT_EQ(std::bit_cast<uint64_t>(a), std::bit_cast<uint64_t>(b))

auto f_sin = [](float x) { return dm::sin(x); };
auto f_cos = [](float x) { return dm::cos(x); };
auto f_tan = [](float x) { return dm::tan(x); };
auto f_atan = [](float x) { return dm::atan(x); };
auto f_asin = [](float x) { return dm::asin(x); };
auto f_acos = [](float x) { return dm::acos(x); };
auto f_exp = [](float x) { return dm::exp(x); };
auto f_log = [](float x) { return dm::log(x); };
auto d_sin = [](double x) { return dm::sin(x); };
auto d_cos = [](double x) { return dm::cos(x); };
auto d_tan = [](double x) { return dm::tan(x); };
auto d_atan = [](double x) { return dm::atan(x); };
auto d_asin = [](double x) { return dm::asin(x); };
auto d_acos = [](double x) { return dm::acos(x); };
auto d_exp = [](double x) { return dm::exp(x); };
auto d_log = [](double x) { return dm::log(x); };
auto r_sin = [](double x) { return std::sin(x); };
auto r_cos = [](double x) { return std::cos(x); };
auto r_tan = [](double x) { return std::tan(x); };
auto r_atan = [](double x) { return std::atan(x); };
auto r_asin = [](double x) { return std::asin(x); };
auto r_acos = [](double x) { return std::acos(x); };
auto r_exp = [](double x) { return std::exp(x); };
auto r_log = [](double x) { return std::log(x); };

}  // namespace

// ---- sin / cos / tan ---------------------------------------------------------------------

TEST(DetMath, SinCosFloatWithin1UlpOver100Turns) {
  double worst_x = 0.0;
  EXPECT_LE(max_ulps_float(f_sin, r_sin, -100 * kPi, 100 * kPi, 400000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_float(f_cos, r_cos, -100 * kPi, 100 * kPi, 400000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_float(f_tan, r_tan, -100 * kPi, 100 * kPi, 200000, &worst_x), 1) << worst_x;
}

TEST(DetMath, SinCosFloatNearZeroKeepRelativeAccuracy) {
  double worst_x = 0.0;
  EXPECT_LE(max_ulps_float(f_sin, r_sin, -1e-3, 1e-3, 100000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_float(f_tan, r_tan, -1e-3, 1e-3, 100000, &worst_x), 1) << worst_x;
  EXPECT_SAME_BITS(dm::sin(-0.0f), -0.0f);
  EXPECT_SAME_BITS(dm::sin(0.0f), 0.0f);
  EXPECT_SAME_BITS(dm::tan(-0.0f), -0.0f);
  EXPECT_EQ(dm::cos(-0.0f), 1.0f);
  const float tiny = std::numeric_limits<float>::denorm_min();
  EXPECT_EQ(dm::sin(tiny), tiny);
  EXPECT_EQ(dm::sin(1e-30f), 1e-30f);
}

TEST(DetMath, SinCosLargeArguments) {
  double worst_x = 0.0;
  EXPECT_LE(max_ulps_float(f_sin, r_sin, -1e5, 1e5, 200000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_float(f_cos, r_cos, -1e5, 1e5, 200000, &worst_x), 1) << worst_x;
  // Beyond the Cody-Waite range the exact reduction takes over: still within 1 ulp.
  EXPECT_LE(max_ulps_float(f_sin, r_sin, 1e6, 1e9, 100000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_float(f_cos, r_cos, -3e38, 3e38, 100000, &worst_x), 1) << worst_x;
  // Every 997th positive float, through all exponents.
  int64_t worst = 0;
  for (uint32_t b = 0; b < 0x7f800000u; b += 997) {
    const float x = std::bit_cast<float>(b);
    worst = std::max(worst, ulps(dm::sin(x), static_cast<float>(std::sin(static_cast<double>(x)))));
    worst = std::max(worst, ulps(dm::cos(x), static_cast<float>(std::cos(static_cast<double>(x)))));
  }
  EXPECT_LE(worst, 1);
}

TEST(DetMath, SinCosDoubleWithin2Ulp) {
  double worst_x = 0.0;
  EXPECT_LE(max_ulps_double(d_sin, r_sin, -100 * kPi, 100 * kPi, 300000, &worst_x), 2) << worst_x;
  EXPECT_LE(max_ulps_double(d_cos, r_cos, -100 * kPi, 100 * kPi, 300000, &worst_x), 2) << worst_x;
  EXPECT_LE(max_ulps_double(d_tan, r_tan, -100 * kPi, 100 * kPi, 200000, &worst_x), 3) << worst_x;
  EXPECT_LE(max_ulps_double(d_sin, r_sin, -1e7, 1e7, 200000, &worst_x), 2) << worst_x;
  EXPECT_LE(max_ulps_double(d_cos, r_cos, -1e300, 1e300, 200000, &worst_x), 2) << worst_x;
}

TEST(DetMath, SinCosNearMultiplesOfHalfPi) {
  // The doubles and floats nearest k pi/2: the reduced argument is tiny, so the reduction has
  // to be accurate far below the argument's own ulp.
  for (int k = 1; k <= 4000; ++k) {
    const double xd = k * (kPi / 2);
    for (double x : {std::nextafter(xd, 0.0), xd, std::nextafter(xd, 1e300)}) {
      EXPECT_LE(ulps(dm::sin(x), std::sin(x)), 2) << x;
      EXPECT_LE(ulps(dm::cos(x), std::cos(x)), 2) << x;
      const float xf = static_cast<float>(x);
      EXPECT_LE(ulps(dm::sin(xf), static_cast<float>(std::sin(static_cast<double>(xf)))), 1) << xf;
      EXPECT_LE(ulps(dm::cos(xf), static_cast<float>(std::cos(static_cast<double>(xf)))), 1) << xf;
    }
  }
}

TEST(DetMath, SincosMatchesSinAndCosBitForBit) {
  for (float x : {-1e5f, -12.5f, -1.0f, 0.0f, 1e-8f, 0.7853982f, 3.0f, 1234.5f, 7e20f}) {
    const dm::SinCos<float> sc = dm::sincos(x);
    EXPECT_SAME_BITS(sc.sin, dm::sin(x));
    EXPECT_SAME_BITS(sc.cos, dm::cos(x));
    const dm::SinCos<double> scd = dm::sincos(static_cast<double>(x));
    EXPECT_SAME_BITS_D(scd.sin, dm::sin(static_cast<double>(x)));
    EXPECT_SAME_BITS_D(scd.cos, dm::cos(static_cast<double>(x)));
  }
}

TEST(DetMath, PythagoreanIdentity) {
  for (int i = 0; i <= 100000; ++i) {
    const float t = -1000.0f + 0.02f * static_cast<float>(i);
    const dm::SinCos<float> sc = dm::sincos(t);
    const float one = sc.sin * sc.sin + sc.cos * sc.cos;
    ASSERT_NEAR(one, 1.0f, 3e-7f) << t;
  }
}

// ---- atan / atan2 ------------------------------------------------------------------------

TEST(DetMath, AtanWithinUlps) {
  double worst_x = 0.0;
  EXPECT_LE(max_ulps_float(f_atan, r_atan, -50, 50, 300000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_float(f_atan, r_atan, -1e30, 1e30, 100000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_double(d_atan, r_atan, -50, 50, 300000, &worst_x), 2) << worst_x;
  EXPECT_LE(max_ulps_double(d_atan, r_atan, -1e-5, 1e-5, 100000, &worst_x), 2) << worst_x;
  EXPECT_SAME_BITS(dm::atan(-0.0f), -0.0f);
  EXPECT_SAME_BITS(dm::atan(kInfF), static_cast<float>(kPi / 2));
  EXPECT_SAME_BITS(dm::atan(-kInfF), static_cast<float>(-kPi / 2));
  EXPECT_SAME_BITS_D(dm::atan(1.0), std::atan(1.0));
}

TEST(DetMath, Atan2AllQuadrants) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_real_distribution<double> expo(-40.0, 40.0);
  int64_t worst_f = 0, worst_d = 0;
  for (int i = 0; i < 400000; ++i) {
    const double y = mant(rng) * std::exp2(expo(rng));
    const double x = mant(rng) * std::exp2(expo(rng));
    worst_d = std::max(worst_d, ulps(dm::atan2(y, x), std::atan2(y, x)));
    const float yf = static_cast<float>(y), xf = static_cast<float>(x);
    worst_f = std::max(worst_f, ulps(dm::atan2(yf, xf), static_cast<float>(std::atan2(double{yf}, double{xf}))));
  }
  EXPECT_LE(worst_f, 1);
  EXPECT_LE(worst_d, 2);
  // Points on a circle, including the axes and the diagonals exactly.
  for (int i = 0; i < 3600; ++i) {
    const double a = (i - 1800) * (kPi / 1800);
    const float y = static_cast<float>(std::sin(a)), x = static_cast<float>(std::cos(a));
    EXPECT_LE(ulps(dm::atan2(y, x), static_cast<float>(std::atan2(double{y}, double{x}))), 1) << a;
  }
  for (float v : {1.0f, 3.5f, 1e-30f, 1e30f}) {
    EXPECT_SAME_BITS(dm::atan2(v, 0.0f), static_cast<float>(kPi / 2));
    EXPECT_SAME_BITS(dm::atan2(-v, 0.0f), static_cast<float>(-kPi / 2));
    EXPECT_SAME_BITS(dm::atan2(0.0f, -v), static_cast<float>(kPi));
    EXPECT_SAME_BITS(dm::atan2(-0.0f, -v), static_cast<float>(-kPi));
    EXPECT_SAME_BITS(dm::atan2(v, v), static_cast<float>(kPi / 4));
    EXPECT_SAME_BITS(dm::atan2(v, -v), static_cast<float>(3 * kPi / 4));
    EXPECT_SAME_BITS(dm::atan2(-v, -v), static_cast<float>(-3 * kPi / 4));
  }
}

TEST(DetMath, Atan2SpecialValuesMatchC99) {
  const double values[] = {0.0, -0.0, 1.0, -1.0, 2.5e-300, -7e300, kInfD, -kInfD, kNaND};
  for (double y : values) {
    for (double x : values) {
      EXPECT_EQ(ulps(dm::atan2(y, x), std::atan2(y, x)), 0) << "atan2(" << y << ", " << x << ")";
      if (!std::isnan(y) && !std::isnan(x)) {
        EXPECT_EQ(std::signbit(dm::atan2(y, x)), std::signbit(std::atan2(y, x))) << y << " " << x;
      }
      const float yf = static_cast<float>(y), xf = static_cast<float>(x);
      const float want = static_cast<float>(std::atan2(double{yf}, double{xf}));
      EXPECT_EQ(ulps(dm::atan2(yf, xf), want), 0) << "atan2f(" << yf << ", " << xf << ")";
      if (!std::isnan(yf) && !std::isnan(xf)) {
        EXPECT_EQ(std::signbit(dm::atan2(yf, xf)), std::signbit(want));
      }
    }
  }
}

TEST(DetMath, Atan2InvertsSinCos) {
  for (int i = -100000; i <= 100000; ++i) {
    const float t = 3.1415925f * static_cast<float>(i) / 100000.0f;
    const dm::SinCos<float> sc = dm::sincos(t);
    ASSERT_NEAR(dm::atan2(sc.sin, sc.cos), t, 4e-7f) << t;
  }
}

// ---- asin / acos -------------------------------------------------------------------------

TEST(DetMath, AsinAcosOnClosedInterval) {
  double worst_x = 0.0;
  EXPECT_LE(max_ulps_float(f_asin, r_asin, -1, 1, 400000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_float(f_acos, r_acos, -1, 1, 400000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_double(d_asin, r_asin, -1, 1, 300000, &worst_x), 3) << worst_x;
  EXPECT_LE(max_ulps_double(d_acos, r_acos, -1, 1, 300000, &worst_x), 3) << worst_x;
  // The floats next to +-1, where both functions are steepest.
  float x = 1.0f;
  for (int i = 0; i < 2000; ++i, x = std::nextafter(x, 0.0f)) {
    EXPECT_LE(ulps(dm::acos(x), static_cast<float>(std::acos(double{x}))), 1) << x;
    EXPECT_LE(ulps(dm::asin(-x), static_cast<float>(std::asin(double{-x}))), 1) << x;
  }
  EXPECT_SAME_BITS(dm::asin(1.0f), static_cast<float>(kPi / 2));
  EXPECT_SAME_BITS(dm::asin(-1.0f), static_cast<float>(-kPi / 2));
  EXPECT_SAME_BITS(dm::acos(1.0f), 0.0f);
  EXPECT_SAME_BITS(dm::acos(-1.0f), static_cast<float>(kPi));
  EXPECT_SAME_BITS(dm::acos(0.0f), static_cast<float>(kPi / 2));
  EXPECT_SAME_BITS(dm::asin(-0.0f), -0.0f);
  EXPECT_SAME_BITS_D(dm::acos(-1.0), std::acos(-1.0));
  EXPECT_SAME_BITS_D(dm::asin(1.0), std::asin(1.0));
  EXPECT_TRUE(std::isnan(dm::asin(1.0000001f)));
  EXPECT_TRUE(std::isnan(dm::acos(-1.0000001f)));
  EXPECT_TRUE(std::isnan(dm::asin(2.0)));
}

// ---- exp / log / pow ---------------------------------------------------------------------

TEST(DetMath, ExpLogWithinUlps) {
  double worst_x = 0.0;
  EXPECT_LE(max_ulps_float(f_exp, r_exp, -103.0, 88.7, 400000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_float(f_exp, r_exp, -1e-3, 1e-3, 100000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_double(d_exp, r_exp, -745.0, 709.7, 300000, &worst_x), 2) << worst_x;
  EXPECT_LE(max_ulps_double(d_exp, r_exp, -5.0, 5.0, 300000, &worst_x), 2) << worst_x;
  EXPECT_LE(max_ulps_float(f_log, r_log, 1e-6, 1e6, 300000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_float(f_log, r_log, 0.5, 2.0, 300000, &worst_x), 1) << worst_x;
  EXPECT_LE(max_ulps_double(d_log, r_log, 0.5, 2.0, 300000, &worst_x), 2) << worst_x;
  EXPECT_LE(max_ulps_double(d_log, r_log, 1e-300, 1e300, 300000, &worst_x), 2) << worst_x;
  // Every 4099th positive float (subnormals included) for log, every 1021st below 104 for exp.
  int64_t worst = 0;
  for (uint32_t b = 1; b < 0x7f800000u; b += 4099) {
    const float x = std::bit_cast<float>(b);
    worst = std::max(worst, ulps(dm::log(x), static_cast<float>(std::log(double{x}))));
    if (x < 104.0f) {
      worst = std::max(worst, ulps(dm::exp(x), static_cast<float>(std::exp(double{x}))));
      worst = std::max(worst, ulps(dm::exp(-x), static_cast<float>(std::exp(double{-x}))));
    }
  }
  EXPECT_LE(worst, 1);
}

TEST(DetMath, ExpLogSpecialValues) {
  EXPECT_EQ(dm::exp(0.0f), 1.0f);
  EXPECT_EQ(dm::exp(-0.0f), 1.0f);
  EXPECT_EQ(dm::exp(kInfF), kInfF);
  EXPECT_SAME_BITS(dm::exp(-kInfF), 0.0f);
  EXPECT_EQ(dm::exp(89.0f), kInfF);
  EXPECT_SAME_BITS(dm::exp(-104.0f), 0.0f);
  EXPECT_EQ(dm::exp(1000.0), kInfD);
  EXPECT_EQ(dm::exp(-1000.0), 0.0);
  EXPECT_SAME_BITS_D(dm::exp(709.78), std::exp(709.78));
  EXPECT_SAME_BITS_D(dm::exp(-745.0), std::exp(-745.0));  // deep subnormal
  EXPECT_EQ(dm::log(1.0f), 0.0f);
  EXPECT_EQ(dm::log(0.0f), -kInfF);
  EXPECT_EQ(dm::log(-0.0f), -kInfF);
  EXPECT_EQ(dm::log(kInfF), kInfF);
  EXPECT_TRUE(std::isnan(dm::log(-1.0f)));
  EXPECT_TRUE(std::isnan(dm::log(-kInfF)));
  EXPECT_EQ(dm::log(std::numeric_limits<double>::denorm_min()),
            std::log(std::numeric_limits<double>::denorm_min()));
  for (float x = 1e-30f; x < 1e30f; x *= 1.37f) {
    ASSERT_LE(ulps(dm::exp(dm::log(x)), x), 64) << x;  // log rounds to 2^-24 relative of ~69
  }
}

TEST(DetMath, PowMatchesLibm) {
  std::mt19937_64 rng(99);
  std::uniform_real_distribution<double> base(0.0, 10.0), expo(-20.0, 20.0);
  int64_t worst = 0;
  for (int i = 0; i < 300000; ++i) {
    const float x = static_cast<float>(base(rng)), y = static_cast<float>(expo(rng));
    worst = std::max(worst, ulps(dm::pow(x, y), static_cast<float>(std::pow(double{x}, double{y}))));
  }
  EXPECT_LE(worst, 1);
  const float values[] = {0.0f, -0.0f, 0.5f, -0.5f, 1.0f, -1.0f, 2.0f, -2.0f, 3.0f, -3.0f,
                          2.5f, 1e20f, -1e20f, 16777216.0f, 8388609.0f, kInfF, -kInfF, kNaNF};
  for (float x : values) {
    for (float y : values) {
      const float want = static_cast<float>(std::pow(double{x}, double{y}));
      const float got = dm::pow(x, y);
      EXPECT_EQ(ulps(got, want), 0) << "pow(" << x << ", " << y << ")";
      if (!std::isnan(want)) {
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << "pow(" << x << ", " << y << ")";
      }
    }
  }
}

// ---- NaN and infinities never crash and give NaN where the result is undefined --------------

TEST(DetMath, NaNAndInfinityInputs) {
  for (float bad : {kNaNF, -kNaNF}) {
    EXPECT_TRUE(std::isnan(dm::sin(bad)));
    EXPECT_TRUE(std::isnan(dm::cos(bad)));
    EXPECT_TRUE(std::isnan(dm::tan(bad)));
    EXPECT_TRUE(std::isnan(dm::atan(bad)));
    EXPECT_TRUE(std::isnan(dm::atan2(bad, 1.0f)));
    EXPECT_TRUE(std::isnan(dm::atan2(1.0f, bad)));
    EXPECT_TRUE(std::isnan(dm::asin(bad)));
    EXPECT_TRUE(std::isnan(dm::acos(bad)));
    EXPECT_TRUE(std::isnan(dm::exp(bad)));
    EXPECT_TRUE(std::isnan(dm::log(bad)));
    EXPECT_TRUE(std::isnan(dm::pow(bad, 2.0f)));
  }
  for (float inf : {kInfF, -kInfF}) {
    EXPECT_TRUE(std::isnan(dm::sin(inf)));
    EXPECT_TRUE(std::isnan(dm::cos(inf)));
    EXPECT_TRUE(std::isnan(dm::tan(inf)));
    EXPECT_TRUE(std::isnan(dm::sincos(inf).sin));
    EXPECT_TRUE(std::isnan(dm::sincos(inf).cos));
    EXPECT_TRUE(std::isnan(dm::asin(inf)));
    EXPECT_TRUE(std::isnan(dm::acos(inf)));
    EXPECT_TRUE(std::isnan(dm::sin(static_cast<double>(inf))));
  }
  EXPECT_TRUE(std::isnan(dm::sin(kNaND)));
  EXPECT_TRUE(std::isnan(dm::exp(kNaND)));
  EXPECT_TRUE(std::isnan(dm::log(-kNaND)));
}

// ---- rotations ---------------------------------------------------------------------------

namespace {
Vec3 rotate(Quat q, Vec3 v) { return q * v; }  // glm's rotation is plain arithmetic
}  // namespace

TEST(DetMath, AxisAngleRotatesRightHanded) {
  const Quat q = dm::axis_angle(Vec3(0, 0, 1), static_cast<float>(kPi / 2));
  const Vec3 v = rotate(q, Vec3(1, 0, 0));
  EXPECT_NEAR(v.x, 0.0f, 1e-7f);
  EXPECT_NEAR(v.y, 1.0f, 1e-7f);
  EXPECT_NEAR(v.z, 0.0f, 1e-7f);
  const Quat r = dm::axis_angle(Vec3(0, 1, 0), static_cast<float>(kPi));  // half turn about +Y
  const Vec3 w = rotate(r, Vec3(1, 0, 0));
  EXPECT_NEAR(w.x, -1.0f, 1e-7f);
  EXPECT_NEAR(w.z, 0.0f, 1e-7f);
  EXPECT_NEAR(glm::length(dm::axis_angle(glm::normalize(Vec3(1, 2, 3)), 0.7f)), 1.0f, 1e-7f);
}

TEST(DetMath, AnglesBetweenQuaternions) {
  const Vec3 axis = glm::normalize(Vec3(0.3f, -1.0f, 0.5f));
  for (float a : {-2.0f, -0.5f, 0.0f, 0.25f, 1.0f, 3.0f}) {
    for (float b : {-3.1f, -1e-4f, 0.0f, 2e-5f, 0.6f, 2.9f}) {
      const float expected = std::fabs(b - a) <= static_cast<float>(kPi)
                                 ? std::fabs(b - a)
                                 : static_cast<float>(2 * kPi) - std::fabs(b - a);
      const float got = dm::angle_between_quats(dm::axis_angle(axis, a), dm::axis_angle(axis, b));
      EXPECT_NEAR(got, expected, 2e-6f) << a << " " << b;
    }
  }
  // Small angles stay accurate (2 acos(w) would give 0 or 3.5e-4 here).
  const float small = dm::quat_angle(dm::axis_angle(axis, 1e-5f));
  EXPECT_NEAR(small, 1e-5f, 1e-11f);
  EXPECT_FLOAT_EQ(dm::quat_angle(dm::axis_angle(axis, 2.0f)), 2.0f);
  // q and -q are the same rotation.
  const Quat q = dm::axis_angle(axis, 2.5f);
  EXPECT_FLOAT_EQ(dm::quat_angle(Quat(-q.w, -q.x, -q.y, -q.z)), 2.5f);
}

TEST(DetMath, RotationVectorRoundTrip) {
  for (const Vec3 v : {Vec3(0.0f), Vec3(1e-6f, 0, 0), Vec3(0.1f, -0.2f, 0.3f), Vec3(0, 3.0f, 0),
                       Vec3(-1.5f, 1.0f, 2.0f)}) {
    const Quat q = dm::from_rotation_vector(v);
    EXPECT_NEAR(glm::length(q), 1.0f, 1e-6f);
    const Vec3 back = dm::to_rotation_vector(q);
    EXPECT_NEAR(back.x, v.x, 2e-6f);
    EXPECT_NEAR(back.y, v.y, 2e-6f);
    EXPECT_NEAR(back.z, v.z, 2e-6f);
  }
  const Quat q = dm::from_rotation_vector(Vec3(0, 0, static_cast<float>(kPi / 2)));
  const Vec3 v = rotate(q, Vec3(1, 0, 0));
  EXPECT_NEAR(v.y, 1.0f, 1e-7f);
}

TEST(DetMath, SlerpEndpointsAndMidpoint) {
  const Vec3 axis(0, 1, 0);
  const Quat a = dm::axis_angle(axis, 0.2f), b = dm::axis_angle(axis, 1.8f);
  EXPECT_NEAR(dm::angle_between_quats(dm::slerp(a, b, 0.0f), a), 0.0f, 1e-6f);
  EXPECT_NEAR(dm::angle_between_quats(dm::slerp(a, b, 1.0f), b), 0.0f, 1e-6f);
  EXPECT_NEAR(dm::quat_angle(dm::slerp(a, b, 0.5f)), 1.0f, 2e-6f);
  EXPECT_NEAR(dm::quat_angle(dm::slerp(a, b, 0.25f)), 0.6f, 2e-6f);
  // Shorter arc: -b is the same rotation.
  EXPECT_NEAR(dm::quat_angle(dm::slerp(a, Quat(-b.w, -b.x, -b.y, -b.z), 0.5f)), 1.0f, 2e-6f);
  // Nearly equal inputs use the normalised lerp and stay unit length.
  const Quat c = dm::axis_angle(axis, 0.2001f);
  EXPECT_NEAR(glm::length(dm::slerp(a, c, 0.5f)), 1.0f, 1e-6f);
}

// ---- golden bits: any change here changes recorded hash chains ----------------------------

TEST(DetMath, GoldenFloatBits) {
  struct Case {
    float x;
    uint32_t sin, cos, tan;
  };
  const Case trig[] = {
      {0x1p-1f, 0x3ef57744, 0x3f60a940, 0x3f0bda7b},
      {-0x1.4p+0f, 0xbf72f0a8, 0x3ea171ef, 0xc0409cca},
      {0x1.921fb6p+1f, 0xb3bbbd2e, 0xbf800000, 0x33bbbd2e},
      {0x1.921fb6p+0f, 0x3f800000, 0xb33bbd2e, 0xcbae8a4a},
      {0x1.9p+6f, 0xbf01a12e, 0x3f5cc0ee, 0xbf1653a7},
      {-0x1.3a28c6p+8f, 0xb6c55799, 0x3f800000, 0xb6c55799},
      {0x1.81cd6cp+13f, 0xbf344b08, 0x3f35be20, 0xbf7df549},
      {0x1.86ap+16f, 0x3d126d55, 0xbf7fd61c, 0xbd12854f},
      {-0x1.81cd66p+16f, 0xbc0ccd2c, 0x3f7ffd94, 0xbc0cce80},
      {0x1.c9c38p+24f, 0x3f76d13e, 0xbe87e65d, 0xc0687849},
      {0x1.93e594p+99f, 0xbf4a89b0, 0xbf1c9222, 0x3fa5943b},
  };
  for (const Case& c : trig) {
    EXPECT_EQ(std::bit_cast<uint32_t>(dm::sin(c.x)), c.sin) << "sin " << c.x;
    EXPECT_EQ(std::bit_cast<uint32_t>(dm::cos(c.x)), c.cos) << "cos " << c.x;
    EXPECT_EQ(std::bit_cast<uint32_t>(dm::tan(c.x)), c.tan) << "tan " << c.x;
  }
  struct Unary {
    float (*f)(float);
    const char* name;
    float x;
    uint32_t bits;
  };
  const Unary unary[] = {
      {dm::atan, "atan", 0x1.eb851ep-6f, 0x3cf5afb2},   {dm::atan, "atan", -0x1.333334p-2f, 0xbe9539d4},
      {dm::atan, "atan", 0x1.666666p-1f, 0x3f1c5889},   {dm::atan, "atan", 0x1p+0f, 0x3f490fdb},
      {dm::atan, "atan", -0x1.4p+1f, 0xbf985b6c},       {dm::atan, "atan", 0x1.4p+5f, 0x3fc5dcd3},
      {dm::atan, "atan", -0x1.e848p+19f, 0xbfc90fd2},   {dm::asin, "asin", -0x1p+0f, 0xbfc90fdb},
      {dm::asin, "asin", -0x1.fff2e4p-1f, 0xbfc74067},  {dm::asin, "asin", -0x1p-1f, 0xbf060a92},
      {dm::asin, "asin", 0x1.99999ap-4f, 0x3dcd2494},   {dm::asin, "asin", 0x1.6a0902p-1f, 0x3f490f39},
      {dm::asin, "asin", 0x1.fffebp-1f, 0x3fc87d36},    {dm::acos, "acos", -0x1p+0f, 0x40490fdb},
      {dm::acos, "acos", -0x1.fff2e4p-1f, 0x40482821},  {dm::acos, "acos", -0x1p-1f, 0x40060a92},
      {dm::acos, "acos", 0x1.99999ap-4f, 0x3fbc3d91},   {dm::acos, "acos", 0x1.6a0902p-1f, 0x3f49107c},
      {dm::acos, "acos", 0x1.fffebp-1f, 0x3b92a47e},    {dm::acos, "acos", 0x1p+0f, 0x00000000},
      {dm::exp, "exp", -0x1.9p+6f, 0x0000001b},         {dm::exp, "exp", -0x1.5p+3f, 0x37e6fe13},
      {dm::exp, "exp", -0x1.47ae14p-7f, 0x3f7d73e8},    {dm::exp, "exp", 0x1.333334p-2f, 0x3facc82d},
      {dm::exp, "exp", 0x1p+0f, 0x402df854},            {dm::exp, "exp", 0x1.dp+2f, 0x44b0035b},
      {dm::exp, "exp", 0x1.6p+6f, 0x7ef882b7},          {dm::log, "log", 0x1.16c2p-133f, 0xc2b834f2},
      {dm::log, "log", 0x1.0624dep-10f, 0xc0dd0c55},    {dm::log, "log", 0x1.8p-1f, 0xbe934b11},
      {dm::log, "log", 0x1.00418ap+0f, 0x3a83033b},     {dm::log, "log", 0x1p+1f, 0x3f317218},
      {dm::log, "log", 0x1.4p+3f, 0x40135d8e},          {dm::log, "log", 0x1.c363ccp+127f, 0x42b13196},
  };
  for (const Unary& u : unary) {
    EXPECT_EQ(std::bit_cast<uint32_t>(u.f(u.x)), u.bits) << u.name << " " << u.x;
  }
  struct Binary {
    float (*f)(float, float);
    const char* name;
    float a, b;
    uint32_t bits;
  };
  const Binary binary[] = {
      {dm::atan2, "atan2", 0x1p+0f, 0x1p+1f, 0x3eed6338},
      {dm::atan2, "atan2", 0x1p+1f, -0x1p+0f, 0x40023454},
      {dm::atan2, "atan2", -0x1.8p+1f, -0x1p-1f, 0xbfde3372},
      {dm::atan2, "atan2", -0x1p-2f, 0x1p+2f, 0xbd7faade},
      {dm::atan2, "atan2", 0.0f, -0x1p+0f, 0x40490fdb},
      {dm::atan2, "atan2", 0x1.0624dep-10f, 0x1p+0f, 0x3a83126c},
      {dm::pow, "pow", 2.5f, 3.7f, 0x41ed64a0},
      {dm::pow, "pow", 0.9f, 60.0f, 0x3aeb8990},
      {dm::pow, "pow", -1.5f, 5.0f, 0xc0f30000},
  };
  for (const Binary& b : binary) {
    EXPECT_EQ(std::bit_cast<uint32_t>(b.f(b.a, b.b)), b.bits) << b.name << " " << b.a << " " << b.b;
  }
}

TEST(DetMath, GoldenDoubleBits) {
  struct Case {
    double x;
    uint64_t sin, cos;
  };
  const Case trig[] = {
      {0x1.8p-1, 0x3fe5cffc16bf8f0e, 0x3fe769fec655211f},
      {0x1p+1, 0x3fed18f6ead1b446, 0xbfdaa22657537205},
      {0x1.921fb54442d18p+0, 0x3ff0000000000000, 0x3c91a62633145c07},
      {0x1.e848p+19, 0xbfd6664b2568d867, 0x3fedf9df9906d32c},
      {0x1.0f0cf064dd592p+73, 0xbfeb453ab76bf397, 0x3fe0be2cef01c8f4},
      {0x1.1eb2d66005835p+999, 0xbfe05dbfb036ae17, 0x3feb7f859dd68d6e},
  };
  for (const Case& c : trig) {
    EXPECT_EQ(std::bit_cast<uint64_t>(dm::sin(c.x)), c.sin) << "sin " << c.x;
    EXPECT_EQ(std::bit_cast<uint64_t>(dm::cos(c.x)), c.cos) << "cos " << c.x;
  }
  EXPECT_EQ(std::bit_cast<uint64_t>(dm::atan2(-0.3, -0.8)), 0xc00643382c07913aull);
  EXPECT_EQ(std::bit_cast<uint64_t>(dm::exp(-3.3)), 0x3fa2e259bb85be85ull);
  EXPECT_EQ(std::bit_cast<uint64_t>(dm::log(123.456)), 0x401343774f3e2362ull);
  EXPECT_EQ(std::bit_cast<uint64_t>(dm::asin(0.3)), 0x3fd380159e14f6feull);
}
