// keel-replay view REC [--against OTHER] --out PAGE.html: re-runs the recording and writes
// the page that plays it (replay/tool/src/view/, replay/tool/viewer/).
#include <keel/replay/commands.h>
#include <keel/replay/format.h>
#include <keel/replay/view.h>

#include "common.h"

#include <cstdio>
#include <fstream>

namespace keel::replay::cli {

namespace {

void summarise(const view::Data& d, Io io) {
  if (!d.against) return;
  const view::Against& g = *d.against;
  if (g.inputs_at) io.out << "inputs first differ at tick " << *g.inputs_at << "\n";
  if (!g.first_tick) {
    io.out << "no difference with " << g.path << "\n";
    return;
  }
  io.out << "first differing tick: " << *g.first_tick << " (A " << hex_hash(g.hash_a) << ", B " << hex_hash(g.hash_b)
         << "); bodies that differ there:";
  for (uint32_t id : g.diff_bodies) io.out << " " << id;
  io.out << (g.diff_bodies.empty() ? " none (the re-runs agree here; see keel-replay diff)" : "") << "\n";
}

}  // namespace

int view(const ViewArgs& args, Io io) {
  detail::Progress progress(io, "view");
  view::CollectOptions co;
  co.threads = args.threads;
  co.rules = io.rules;
  co.progress = [&](uint64_t done, uint64_t total) { progress.update(done, total); };
  auto data = view::collect(args.rec, args.against, co);
  progress.done();
  if (!data) {
    io.err << "error: " << data.error().message << "\n";
    return kError;
  }
  for (const std::string& w : data->warnings) io.err << "warning: " << w << "\n";
  view::PageOptions po;
  po.every = args.every;
  po.max_bytes = uint64_t(args.max_mb * 1e6);
  auto page = view::render(*data, po);
  if (!page) {
    io.err << "error: " << page.error().message << "\n";
    return kError;
  }
  std::ofstream file(args.out, std::ios::binary | std::ios::trunc);
  file.write(page->html.data(), std::streamsize(page->html.size()));
  file.close();
  if (!file) {
    io.err << "error: " << args.out << ": cannot write\n";
    return kError;
  }
  summarise(*data, io);
  char size[32];
  std::snprintf(size, sizeof size, "%.2f MB", double(page->html.size()) / 1e6);
  io.out << "wrote " << args.out << " (" << size << "): ticks " << data->first_tick << ".." << data->last_tick
         << ", drawn every " << page->every << " tick(s), contacts "
         << (page->contact_every ? "every " + std::to_string(page->contact_every) + " tick(s)" : std::string("left out"))
         << "\n";
  if (page->html.size() > po.max_bytes) io.err << "warning: the page is larger than --max-mb\n";
  return kOk;
}

}  // namespace keel::replay::cli
