// The /metrics endpoint under pressure: the request-line parser, the connection cap, the
// accept backoff when the process has no descriptor left, binding exactly the address
// asked for, and a real keel-server with a low open-files limit whose new matches still
// open their recordings while HTTP clients hold every connection they can.
#include "server_fixture.h"

#include "http.h"
#include "log.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace keel::test {
namespace {

using asio::ip::tcp;

TEST(HttpParse, RequestLines) {
  auto ok = server::parse_http_request("GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n");
  EXPECT_EQ(ok.status, 0);
  EXPECT_EQ(ok.path, "/metrics");
  EXPECT_FALSE(ok.head_only);
  auto head = server::parse_http_request("HEAD /healthz HTTP/1.0\r\n\r\n");
  EXPECT_EQ(head.status, 0);
  EXPECT_TRUE(head.head_only);
  EXPECT_EQ(head.path, "/healthz");
  EXPECT_EQ(server::parse_http_request("POST /metrics HTTP/1.1\r\n\r\n").status, 405);
  for (const char* bad : {"", "\r\n\r\n", "GET\r\n\r\n", "GET /metrics\r\n\r\n", "GET  /metrics HTTP/1.1\r\n\r\n",
                          "GET metrics HTTP/1.1\r\n\r\n", "GET /metrics HTTP/2.0\r\n\r\n",
                          "GET /met\x01rics HTTP/1.1\r\n\r\n", "GET /metrics HTTP/1.1 extra\r\n\r\n"}) {
    EXPECT_EQ(server::parse_http_request(bad).status, 400) << bad;
  }
  std::string answer = server::format_http_response({404, "text/plain", "nope\n"}, true);
  EXPECT_EQ(answer.find("HTTP/1.1 404 Not Found\r\n"), 0u);
  EXPECT_NE(answer.find("Content-Length: 5\r\n"), std::string::npos);
  EXPECT_EQ(answer.find("nope"), std::string::npos);  // HEAD: no body
}

// An HttpServer on its own I/O thread.
struct HttpFixture {
  asio::io_context io;
  server::Logger log{server::LogLevel::Error};
  server::HttpServer http;
  std::thread thread;
  tcp::endpoint at;

  explicit HttpFixture(server::HttpLimits limits, const std::string& address = "127.0.0.1")
      : http(io, [](const std::string& path) { return server::HttpResponse{200, "text/plain", "hi " + path}; }, log,
             limits) {
    std::string err = http.start({asio::ip::make_address(address), 0});
    if (!err.empty()) throw std::runtime_error(err);
    at = http.local_endpoint();
    thread = std::thread([this] { io.run(); });
  }
  ~HttpFixture() {
    http.stop();
    io.stop();
    thread.join();
  }
};

// What the peer sends before closing, waiting up to `seconds`; "" on refusal or timeout.
std::string talk(tcp::socket& s, const std::string& request, double seconds = 2.0) {
  asio::error_code ec;
  if (!request.empty()) asio::write(s, asio::buffer(request), ec);
  s.non_blocking(true);
  std::string got;
  char buf[4096];
  double end = seconds_now() + seconds;
  while (seconds_now() < end) {
    size_t n = s.read_some(asio::buffer(buf), ec);
    if (ec == asio::error::would_block) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    got.append(buf, n);
    if (ec) break;
  }
  return got;
}

bool closed_within(tcp::socket& s, double seconds) {
  s.non_blocking(true);
  char c;
  asio::error_code ec;
  double end = seconds_now() + seconds;
  while (seconds_now() < end) {
    s.read_some(asio::buffer(&c, 1), ec);
    if (ec && ec != asio::error::would_block) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return false;
}

TEST(HttpEndpoint, ConnectionsOverTheCapAreClosedAtOnceAndCounted) {
  server::HttpLimits limits;
  limits.max_connections = 4;
  HttpFixture f(limits);
  asio::io_context io;
  std::vector<std::unique_ptr<tcp::socket>> held;
  for (int i = 0; i < 10; ++i) {
    held.push_back(std::make_unique<tcp::socket>(io));
    held.back()->connect(f.at);
    // One at a time, so which ones are over the cap is known.
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (int i = 4; i < 10; ++i) EXPECT_TRUE(closed_within(*held[i], 1.0)) << "connection " << i;
  EXPECT_EQ(f.http.stats().rejected.load(), 6u);
  EXPECT_EQ(f.http.stats().open.load(), 4u);
  // The four under the cap are still served.
  for (int i = 0; i < 4; ++i) {
    EXPECT_NE(talk(*held[i], "GET /x HTTP/1.1\r\n\r\n").find("200 OK"), std::string::npos) << i;
  }
  EXPECT_EQ(f.http.stats().accepted.load(), 4u);
  EXPECT_NE(f.http.prometheus_text().find("keel_http_connections_rejected_total 6\n"), std::string::npos);
}

TEST(HttpEndpoint, SlowAndOversizedRequestsAreCutOff) {
  server::HttpLimits limits;
  limits.deadline = std::chrono::milliseconds(300);
  HttpFixture f(limits);
  asio::io_context io;
  tcp::socket slow(io), big(io);
  slow.connect(f.at);
  asio::write(slow, asio::buffer(std::string("GET /x HTTP/1.1\r\n")));  // never ends its head
  double t0 = seconds_now();
  EXPECT_TRUE(closed_within(slow, 2.0));
  EXPECT_LT(seconds_now() - t0, 1.0);
  big.connect(f.at);
  std::string answer = talk(big, "GET /" + std::string(9000, 'a'));
  EXPECT_NE(answer.find("431"), std::string::npos) << answer;
}

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// With every descriptor taken, accept fails (EMFILE) while a connection waits in the
// queue; retrying at once would spin the I/O thread. It pauses instead, and serves the
// waiting connection once a descriptor is free again.
TEST(HttpEndpoint, OutOfDescriptorsPausesTheAcceptorInsteadOfSpinning) {
  server::HttpLimits limits;
  limits.accept_backoff = std::chrono::milliseconds(100);
  HttpFixture f(limits);
  asio::io_context io;
  tcp::socket client(io);
  client.open(tcp::v4());  // its descriptor before the limit comes down

  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  std::optional<uint64_t> free = server::free_descriptors();
  ASSERT_TRUE(free);
  rlimit low = saved;
  low.rlim_cur = saved.rlim_cur - *free + 8;  // eight free
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  std::vector<int> filler;
  for (int fd; (fd = open("/dev/null", O_RDONLY)) >= 0;) filler.push_back(fd);
  EXPECT_EQ(errno, EMFILE);
  EXPECT_GE(filler.size(), 6u);

  client.connect(f.at);  // the kernel completes it; the server cannot take it
  double cpu0 = process_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  double cpu = process_cpu_seconds() - cpu0;
  if (std::getenv("KEEL_TEST_FIGURES")) std::printf("accept backoff: CPU %.3f s in 1 s\n", cpu);
  uint64_t backoffs = f.http.stats().accept_backoffs.load();

  for (int fd : filler) close(fd);
  setrlimit(RLIMIT_NOFILE, &saved);
  EXPECT_GE(backoffs, 3u);   // ~10 pauses of 100 ms in the second
  EXPECT_LE(backoffs, 15u);  // not tens of thousands of failed accepts
  EXPECT_LT(cpu, 0.1) << "the I/O thread is spinning";  // spinning: 0.2 s (loaded machine) to 0.9 s
  EXPECT_NE(talk(client, "GET /late HTTP/1.1\r\n\r\n").find("hi /late"), std::string::npos);
}

bool connects(const std::string& address, uint16_t port) {
  asio::io_context io;
  tcp::socket s(io);
  asio::error_code ec;
  s.connect({asio::ip::make_address(address), port}, ec);
  return !ec;
}

TEST(HttpEndpoint, AnIPv6BindDoesNotAnswerIPv4) {
  server::HttpLimits limits;
  HttpFixture any6(limits, "::");
  EXPECT_TRUE(connects("::1", any6.at.port()));
  EXPECT_FALSE(connects("127.0.0.1", any6.at.port()));
}

// --- keel-server with a low open-files limit ------------------------------------------

// Starts keel-server with RLIMIT_NOFILE = `nofile` (set in the child before exec), its
// output into `out_path`.
pid_t spawn_limited(std::vector<std::string> args, const std::string& out_path, rlim_t nofile) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = fork();
  if (pid == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(out, 1);
    dup2(out, 2);
    close(out);
    // Only stdin, stdout and stderr: descriptors the test runner left open would count
    // against the child's low limit.
    for (int fd = 3; fd < 4096; ++fd) close(fd);
    rlimit lim{nofile, nofile};
    setrlimit(RLIMIT_NOFILE, &lim);
    execv(argv[0], argv.data());
    _exit(127);
  }
  return pid;
}

uint16_t free_port(bool udp) {
  asio::io_context io;
  if (udp) return asio::ip::udp::socket(io, {asio::ip::make_address("127.0.0.1"), 0}).local_endpoint().port();
  return tcp::acceptor(io, {asio::ip::make_address("127.0.0.1"), 0}).local_endpoint().port();
}

double child_cpu_seconds(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::istringstream fields(stat.substr(stat.rfind(')') + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i == 14 || i == 15) ticks += std::stod(f);  // utime, stime
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

std::string slurp(const std::string& path) {
  std::stringstream s;
  s << std::ifstream(path).rdbuf();
  return s.str();
}

TEST(HttpEndpoint, ANewMatchOpensItsRecordingWhileScrapersHoldEveryConnection) {
  std::string dir = fresh_dir("http_nofile");
  std::string bin = std::string(KEEL_BINARY_DIR) + "/bin/keel-server";
  uint16_t metrics_port = free_port(false);
  std::string address = "127.0.0.1:" + std::to_string(free_port(true));
  // keel-server opens ~14 descriptors itself; 50 leaves ~36, of which 2 x 4 matches + 16
  // are kept for matches, so the cap comes down to ~12: far fewer than the 60 below.
  pid_t pid = spawn_limited({bin, "--scene", demo_scene(), "--bind", address, "--record", dir, "--metrics",
                             "127.0.0.1:" + std::to_string(metrics_port), "--max-matches", "4",
                             "--status-interval", "0"},
                            dir + "/server.txt", 50);
  ASSERT_GT(pid, 0);
  struct Reap {
    pid_t pid;
    ~Reap() {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  } reap{pid};
  ASSERT_TRUE(drive({}, 10.0, [&] { return connects("127.0.0.1", metrics_port); }));

  asio::io_context io;
  std::vector<std::unique_ptr<tcp::socket>> held;
  for (int i = 0; i < 60; ++i) {
    held.push_back(std::make_unique<tcp::socket>(io));
    asio::error_code ec;
    held.back()->connect({asio::ip::make_address("127.0.0.1"), metrics_port}, ec);
  }
  double cpu0 = child_cpu_seconds(pid);
  TestClientOptions o;
  o.server = address;
  o.client_id = 9;
  o.match_id = 7;
  TestClient c(io, o);
  double t0 = seconds_now();
  c.start(t0);
  EXPECT_TRUE(drive({&c}, 1.5, [&] { return c.playing(); }));
  drive({&c}, std::max(0.0, 1.0 - (seconds_now() - t0)));  // a full second under load
  double cpu = child_cpu_seconds(pid) - cpu0;
  if (std::getenv("KEEL_TEST_FIGURES")) std::printf("keel-server CPU: %.3f s in %.2f s\n", cpu, seconds_now() - t0);
  EXPECT_LT(cpu, 0.6) << "keel-server used " << cpu << " s of CPU in " << seconds_now() - t0 << " s";

  int match7_recordings = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().filename().string().rfind("match-7-", 0) == 0) ++match7_recordings;
  }
  EXPECT_EQ(match7_recordings, 1) << slurp(dir + "/server.txt");

  held.clear();  // the held ones also end by the 2 s deadline
  std::string text;
  drive({&c}, 3.0, [&] {
    asio::error_code ec;
    tcp::socket s(io);
    s.connect({asio::ip::make_address("127.0.0.1"), metrics_port}, ec);
    text = ec ? "" : talk(s, "GET /metrics HTTP/1.1\r\n\r\n");
    return text.find("keel_http_connections_rejected_total") != std::string::npos;
  });
  double rejected = -1, cap = -1;
  if (size_t at = text.find("\nkeel_http_connections_rejected_total "); at != std::string::npos) {
    rejected = std::atof(text.c_str() + at + 38);
  }
  if (size_t at = text.find("\nkeel_http_connection_cap "); at != std::string::npos) cap = std::atof(text.c_str() + at + 26);
  EXPECT_GT(cap, 0);
  EXPECT_LT(cap, 30);
  EXPECT_GE(rejected, 60 - cap);
  EXPECT_NE(slurp(dir + "/server.txt").find("http_connection_cap_lowered"), std::string::npos);
}

}  // namespace
}  // namespace keel::test
