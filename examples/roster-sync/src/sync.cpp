#include "sync.hpp"

#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <ostream>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

#include <studentsvc/errors.hpp>
#include <studentsvc/stop_token.hpp>
#include <studentsvc/streaming.hpp>

#include "exit_codes.hpp"
#include "student_row.hpp"
#include "text.hpp"

namespace roster_sync {
namespace {

/// Which positions of the list a run has stored: every one below `watermark`,
/// and those in `above`. Saved as text ("W" or "W:i,j,...") in sync_runs.
class Checkpoint {
 public:
  [[nodiscard]] static Checkpoint parse(std::string_view text) {
    Checkpoint c;
    auto number = [](std::string_view s) {
      std::size_t v = 0;
      std::from_chars(s.data(), s.data() + s.size(), v);
      return v;
    };
    const auto colon = text.find(':');
    c.watermark_ = number(text.substr(0, colon));
    if (colon == std::string_view::npos) return c;
    for (auto rest = text.substr(colon + 1); !rest.empty();) {
      const auto comma = rest.find(',');
      c.above_.insert(number(rest.substr(0, comma)));
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    }
    return c;
  }
  void mark(std::size_t position) {
    above_.insert(position);
    while (!above_.empty() && *above_.begin() == watermark_) {
      above_.erase(above_.begin());
      ++watermark_;
    }
  }
  [[nodiscard]] bool stored(std::size_t position) const { return position < watermark_ || above_.contains(position); }
  [[nodiscard]] std::string text() const {
    std::string out = std::to_string(watermark_);
    char separator = ':';
    for (const auto p : above_) {
      out += separator;
      out += std::to_string(p);
      separator = ',';
    }
    return out;
  }

 private:
  std::size_t watermark_ = 0;
  std::set<std::size_t> above_;  // small: the lookups that finished ahead of a slower one
};

/// The perms of the list that the run has not stored yet, as an input range
/// for for_each_student; `position_of(index)` maps its index back to the line.
class PendingPerms {
 public:
  PendingPerms(const PermFile& file, const Checkpoint& skip) : reader_(file.read()), skip_(skip) {}

  class iterator {
   public:
    using value_type = std::string;
    using difference_type = std::ptrdiff_t;
    iterator() = default;
    explicit iterator(PendingPerms* owner) : owner_(owner) {}
    const std::string& operator*() const { return *owner_->it_; }
    iterator& operator++() {
      owner_->next();
      return *this;
    }
    void operator++(int) { ++*this; }
    [[nodiscard]] bool at_end() const { return owner_->it_ == std::default_sentinel; }
    friend bool operator==(const iterator& it, std::default_sentinel_t) { return it.at_end(); }

   private:
    PendingPerms* owner_ = nullptr;
  };
  iterator begin() {
    it_ = reader_.begin();
    settle();
    return iterator(this);
  }
  std::default_sentinel_t end() const { return {}; }

  /// The list position of the perm for_each_student numbered `index` (called once per index).
  std::size_t take_position(std::size_t index) {
    const auto found = positions_.find(index);
    const std::size_t position = found->second;
    positions_.erase(found);
    return position;
  }
  [[nodiscard]] bool read_failed() const { return reader_.failed(); }

 private:
  void next() {
    ++it_;
    settle();
  }
  // Skips what the interrupted run stored; records the position of the next perm handed out.
  void settle() {
    while (it_ != std::default_sentinel && skip_.stored(reader_.position())) ++it_;
    if (it_ != std::default_sentinel) positions_.emplace(next_index_++, reader_.position());
  }

  PermFile::Reader reader_;
  PermFile::Reader::iterator it_;
  const Checkpoint& skip_;
  std::size_t next_index_ = 0;
  std::unordered_map<std::size_t, std::size_t> positions_;  // only the perms read and not yet answered
};

/// One lookup's outcome, on its way from the lookups to the writer.
struct Outcome {
  enum class Kind { found, not_found, failed, not_done };
  std::size_t position = 0;
  Kind kind = Kind::not_done;
  std::optional<studentsvc::StudentExtended> student;
  std::string perm;
  bool transient = false;  // failed: a timeout, a reset, a 5xx
};

/// Writes the outcomes in batches on a thread of its own, so that the
/// lookups never wait for the database (the queue is bounded: memory stays flat).
class Writer {
 public:
  Writer(const SyncSettings& settings, Database& db, std::int64_t run_id, RunCounts counts, Checkpoint checkpoint)
      : settings_(settings), db_(db), run_id_(run_id), counts_(counts), checkpoint_(std::move(checkpoint)),
        thread_([this] { loop(); }) {}
  ~Writer() { close(); }

  /// Queues one outcome; waits while the queue is full. False once writing failed.
  bool push(Outcome o) {
    std::unique_lock lock(mutex_);
    room_.wait(lock, [&] { return queue_.size() < 2 * batch() || error_; });
    if (error_) return false;
    queue_.push_back(std::move(o));
    if (queue_.size() >= batch()) ready_.notify_one();
    return true;
  }
  /// Writes what is queued and stops the thread.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    ready_.notify_one();
    if (thread_.joinable()) thread_.join();
  }
  [[nodiscard]] const std::optional<DbError>& error() const { return error_; }
  [[nodiscard]] const RunCounts& counts() const { return counts_; }
  [[nodiscard]] bool failed_writing() const { return error_.has_value(); }

 private:
  std::size_t batch() const { return settings_.batch_size; }

  void loop() {
    for (;;) {
      std::vector<Outcome> batch_items;
      {
        std::unique_lock lock(mutex_);
        // A batch is full, the run ended, or two seconds passed: a slow service still commits often.
        ready_.wait_for(lock, std::chrono::seconds(2), [&] { return queue_.size() >= batch() || closed_; });
        const std::size_t n = std::min(queue_.size(), batch());
        for (std::size_t i = 0; i < n; ++i) {
          batch_items.push_back(std::move(queue_.front()));
          queue_.pop_front();
        }
        if (batch_items.empty() && closed_) return;
      }
      room_.notify_one();
      if (batch_items.empty()) continue;
      if (auto r = write(batch_items); !r) {
        std::lock_guard lock(mutex_);
        error_ = r.error();
        room_.notify_all();
        return;
      }
    }
  }

  DbResult<void> write(std::vector<Outcome>& items) {
    std::vector<std::string> perms;
    for (const auto& o : items) {
      if (o.kind == Outcome::Kind::found || o.kind == Outcome::Kind::not_found) perms.push_back(o.perm);
    }
    if (!settings_.dry_run) {
      if (auto r = db_.begin(); !r) return r;
    }
    auto stored = db_.stored(perms);
    if (!stored) return std::unexpected(stored.error());
    const std::string now = utc_now();
    for (auto& o : items) {
      if (auto r = apply(o, *stored, now); !r) return r;
      if (o.kind != Outcome::Kind::not_done && !o.transient) checkpoint_.mark(o.position);
    }
    if (auto r = flush_inserts(now); !r) return r;
    if (auto r = db_.save_progress(run_id_, counts_, checkpoint_.text()); !r) return r;
    if (!settings_.dry_run) return db_.commit();
    return {};
  }

  // The batch's new rows go in at once, before any other write that may touch them.
  DbResult<void> flush_inserts(std::string_view now) {
    auto r = db_.insert_students(inserts_, now);
    inserts_.clear();
    return r;
  }

  DbResult<void> apply(Outcome& o, std::unordered_map<std::string, StoredStudent>& stored,
                       std::string_view now) {
    const auto row = stored.find(o.perm);
    switch (o.kind) {
      case Outcome::Kind::found: {
        const std::string hash = record_hash(*o.student);
        if (row == stored.end()) {
          ++counts_.inserted;
          stored.emplace(o.perm, StoredStudent{hash, false, false});  // the same perm again in this batch
          inserts_.push_back(NewStudent{std::move(*o.student), hash});
          return {};
        }
        if (row->second.record_hash == hash && !row->second.not_found && !row->second.dropped) {
          ++counts_.unchanged;
          return {};
        }
        ++counts_.updated;
        row->second = StoredStudent{hash, false, false};
        if (auto r = flush_inserts(now); !r) return r;  // the row may be one of them
        return db_.update_student(*o.student, hash, now);
      }
      case Outcome::Kind::not_found: {
        ++counts_.not_found;
        if (row != stored.end() && row->second.not_found && !row->second.dropped) return {};
        const bool has_row = row != stored.end();
        if (has_row) {
          row->second.not_found = true;
          row->second.dropped = false;
        } else {
          stored.emplace(o.perm, StoredStudent{"", true, false});
        }
        if (auto r = flush_inserts(now); !r) return r;
        return db_.mark_not_found(o.perm, has_row, now);
      }
      case Outcome::Kind::failed: ++counts_.failed; return {};
      case Outcome::Kind::not_done: return {};
    }
    return {};
  }

  const SyncSettings& settings_;
  Database& db_;
  const std::int64_t run_id_;
  RunCounts counts_;
  Checkpoint checkpoint_;
  std::vector<NewStudent> inserts_;  // this batch's, written by flush_inserts
  std::mutex mutex_;
  std::condition_variable ready_, room_;
  std::deque<Outcome> queue_;
  bool closed_ = false;
  std::optional<DbError> error_;
  std::thread thread_;  // last: starts once the rest is built
};

std::string summary(std::int64_t run, std::string_view status, std::size_t looked_up, const RunCounts& c,
                    bool dry_run, std::chrono::steady_clock::duration took) {
  const auto tenths = std::chrono::duration_cast<std::chrono::milliseconds>(took).count() / 100;
  return cat("roster-sync: run ", run, " ", status, dry_run ? " (dry run: nothing written)" : "", " in ",
             tenths / 10, ".", tenths % 10, " s: looked up ",
             looked_up, "; inserted ", c.inserted, ", updated ", c.updated, ", unchanged ", c.unchanged,
             ", not found ", c.not_found, ", failed ", c.failed, ", dropped ", c.dropped, "\n");
}

// The roster of this run in a temporary table, then the soft drop: in the
// caller's transaction.
DbResult<std::int64_t> drop_absent(Database& db, const PermFile& perms) {
  if (auto r = db.begin_roster(); !r) return std::unexpected(r.error());
  std::vector<std::string> chunk;
  auto reader = perms.read();
  for (const auto& perm : reader) {
    chunk.push_back(perm);
    if (chunk.size() == 1000) {
      if (auto r = db.add_to_roster(chunk); !r) return std::unexpected(r.error());
      chunk.clear();
    }
  }
  if (auto r = db.add_to_roster(chunk); !r) return std::unexpected(r.error());
  return db.drop_absent(utc_now());
}

}  // namespace

int run_sync(const SyncSettings& settings, const studentsvc::Client& client, Database& db, const PermFile& perms,
             std::ostream& log) {
  const auto started = std::chrono::steady_clock::now();
  auto db_failed = [&](const DbError& e, int status) {
    log << "roster-sync: " << e.message << "\n";
    return status;
  };
  auto locked = db.try_lock();
  if (!locked) return db_failed(locked.error(), exit_configuration);
  if (!*locked) {
    log << "roster-sync: another roster-sync run holds the lock on this database; nothing done\n";
    return exit_unavailable;
  }
  // A dry run is one transaction, rolled back at the end: even the schema.
  if (settings.dry_run) {
    if (auto r = db.begin(); !r) return db_failed(r.error(), exit_configuration);
  }
  if (auto r = db.create_schema(); !r) return db_failed(r.error(), exit_configuration);

  const std::string digest = perms.digest();
  auto previous = db.resumable_run();
  if (!previous) return db_failed(previous.error(), exit_configuration);
  std::int64_t run_id = 0;
  RunCounts counts;
  Checkpoint checkpoint;
  if (settings.resume && *previous) {
    if ((*previous)->perms_digest != digest) {
      log << cat("roster-sync: --resume: ", perms.path(), " is not the list run ", (*previous)->id,
                 " started with; run without --resume\n");
      return exit_configuration;
    }
    run_id = (*previous)->id;
    counts = (*previous)->counts;
    checkpoint = Checkpoint::parse((*previous)->checkpoint);
    if (auto r = db.reopen_run(run_id); !r) return db_failed(r.error(), exit_unavailable);
    log << cat("roster-sync: continuing run ", run_id, "\n");
  } else {
    if (settings.resume) log << "roster-sync: --resume: no interrupted run; starting a new one\n";
    if (*previous) {
      if (auto r = db.abandon_run((*previous)->id, utc_now()); !r) return db_failed(r.error(), exit_unavailable);
    }
    auto new_run = db.start_run(utc_now(), digest);
    if (!new_run) return db_failed(new_run.error(), exit_unavailable);
    run_id = *new_run;
  }

  // The lookups: results go to the writer as they come.
  PendingPerms pending(perms, checkpoint);
  Writer writer(settings, db, run_id, counts, checkpoint);
  bool breaker_open = false;
  std::optional<studentsvc::ApiError> refused;  // 401: the credentials are wrong
  studentsvc::StopSource stop;
  studentsvc::StreamOptions stream;
  stream.max_concurrency = settings.concurrency;
  stream.fail_fast = true;
  stream.stop = stop.get_token();
  const auto batch = client.for_each_student(
      pending,
      [&](std::size_t index, std::string_view perm, studentsvc::Result<studentsvc::StudentExtended> result) {
        Outcome o{pending.take_position(index), Outcome::Kind::found, std::nullopt, std::string(perm)};
        if (result) {
          o.student = std::move(*result);
        } else {
          const auto& e = result.error();
          switch (e.kind) {
            case studentsvc::ErrorKind::not_found: o.kind = Outcome::Kind::not_found; break;
            case studentsvc::ErrorKind::circuit_open:
              // The service is down: stop sending, leave the rest to --resume.
              breaker_open = true;
              o.kind = Outcome::Kind::not_done;
              stop.request_stop();
              break;
            case studentsvc::ErrorKind::cancelled: o.kind = Outcome::Kind::not_done; break;
            case studentsvc::ErrorKind::unauthorized:
              if (!refused) refused = e;
              o.kind = Outcome::Kind::not_done;
              break;
            default:
              o.kind = Outcome::Kind::failed;
              // A transient failure (the service, not the record) is looked up again by --resume.
              o.transient = e.retryable || e.kind == studentsvc::ErrorKind::transport;
              log << cat("roster-sync: ", perm, ": ", studentsvc::to_string(e), "\n");
              break;
          }
        }
        if (!writer.push(std::move(o))) {
          stop.request_stop();
        }
      },
      stream);
  writer.close();
  if (writer.error()) return db_failed(*writer.error(), exit_unavailable);
  if (pending.read_failed()) {
    log << "roster-sync: --perms " << perms.path() << ": reading the file failed\n";
    return exit_configuration;
  }
  counts = writer.counts();

  const bool stopped = breaker_open || refused || batch.stopped_by.has_value();
  if (!settings.dry_run) {
    if (auto r = db.begin(); !r) return db_failed(r.error(), exit_unavailable);
  }
  std::string status;
  if (stopped) {
    status = "stopped";
  } else {
    const auto looked = counts.inserted + counts.updated + counts.unchanged + counts.not_found + counts.failed;
    // Only a run that saw (nearly) every student may say who left: a partial view drops nobody.
    if (looked > 0 && static_cast<double>(counts.failed) * 100.0 <= settings.max_failed_percent * static_cast<double>(looked)) {
      auto dropped = drop_absent(db, perms);
      if (!dropped) return db_failed(dropped.error(), exit_unavailable);
      counts.dropped += *dropped;
    } else if (looked > 0) {
      log << cat("roster-sync: ", counts.failed, " of ", looked, " lookups failed (over ROSTER_SYNC_MAX_FAILED_PERCENT=",
                 settings.max_failed_percent, "): nobody is marked dropped this run\n");
    }
    status = counts.failed > 0 ? "partial" : "ok";
  }
  // A stopped run keeps its checkpoint: --resume continues from it.
  if (auto r = db.finish_run(run_id, status, counts, utc_now()); !r) return db_failed(r.error(), exit_unavailable);
  if (auto r = settings.dry_run ? db.rollback() : db.commit(); !r) return db_failed(r.error(), exit_unavailable);

  log << summary(run_id, status, batch.sent, counts, settings.dry_run, std::chrono::steady_clock::now() - started);
  if (refused) {
    log << "roster-sync: the service refused the credentials (STUDENTSVC_API_KEY, STUDENTSVC_NETWORK_ID, "
           "STUDENTSVC_PASSWORD): "
        << studentsvc::to_string(*refused) << "\n";
    return exit_configuration;
  }
  if (stopped) {
    log << "roster-sync: the service is unavailable"
        << (batch.stopped_by ? ": " + studentsvc::to_string(*batch.stopped_by) : std::string())
        << "; run again with --resume to continue this run\n";
    return exit_unavailable;
  }
  return counts.failed > 0 ? exit_some_failed : exit_synced;
}

}  // namespace roster_sync
