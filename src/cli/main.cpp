// tcsync: make a host's tc state equal to a YAML file.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string_view>
#include <vector>

#include "base/diag.h"
#include "cli/commands.h"
#include "cli/confirm.h"
#include "cli/heap.h"
#include "file/schema.h"

int main(int argc, char** argv) {
  tcsync::restart_with_huge_heap_pages(argv);
  tcsync::keep_large_blocks_in_heap();
  CLI::App app{"tcsync: make a host's traffic control (tc) state equal to a YAML file"};
  app.footer(R"(Examples:
  tcsync validate site.yaml              check a file, touch nothing
  tcsync diff site.yaml                  show the plan; exit 0 in sync, 2 changes pending
  tcsync apply site.yaml                 make the kernel match the file
  tcsync apply --dry-run site.yaml       print the plan, change nothing
  tcsync apply --confirm 60 site.yaml    apply; restored after 60 s unless `tcsync confirm`
  tcsync watch site.yaml                 apply, then keep the kernel equal to the file (events on stdout)
  tcsync dump --dev eth0 > eth0.yaml     write live state as a file apply accepts back
  tcsync stats site.yaml                 counters of the file's objects, by their names
  tcsync stats --format prometheus --output /var/lib/prometheus/node-exporter/tcsync.prom site.yaml
  tcsync --netns lab1 diff site.yaml     work inside the network namespace 'lab1'

Exit codes: 0 done or in sync, 1 error, 2 changes pending (diff).)");
  app.set_version_flag("--version", std::string("tcsync ") + TCSYNC_VERSION);
  app.require_subcommand(1);

  tcsync::CommonOptions common;
  std::string format = "text", color = "auto";
  app.add_option("--netns", common.netns, "Network namespace name (as `ip netns` makes them)");
  app.add_option(
         "--format", format,
         "Output format: text or json (every command; the shapes are in schemas/); stats also prometheus or dot")
      ->check(CLI::IsMember({"text", "json", "prometheus", "dot"}));
  app.add_option("--color", color, "Color: auto (a terminal and no NO_COLOR), always, never")
      ->check(CLI::IsMember({"auto", "always", "never"}));
  app.add_flag("-q,--quiet", common.quiet, "Print only errors");
  app.add_flag("-v,--verbose", common.verbose, "Print how long each phase took (load, dump, plan, apply)");

  std::vector<std::string> files, devices;
  tcsync::ApplyFlags apply_flags;
  std::string on_error = "rollback";
  auto* validate = app.add_subcommand("validate", "Check files without touching the kernel");
  validate->add_option("FILE", files, "tcsync YAML files")->required();
  bool strict = false;
  validate->add_flag("--strict", strict, "Warnings are errors (states the kernel takes but that are likely mistakes)");
  auto* diff = app.add_subcommand("diff", "Print the plan that apply would carry out");
  diff->add_option("FILE", files, "tcsync YAML files")->required();
  std::string against;
  diff->add_option("--against", against,
                   "Compare with a saved `tcsync dump` instead of the kernel (no privilege needed)");
  const char* deep_help = "Compare every rule in full, even flower rules whose fingerprint cookie says unchanged";
  diff->add_flag("--deep", common.deep, deep_help);
  auto* apply = app.add_subcommand("apply", "Make the kernel's tc state equal to the files");
  apply->add_flag("--deep", common.deep, deep_help);
  apply->add_option("FILE", files, "tcsync YAML files")->required();
  apply->add_flag("--dry-run", apply_flags.dry_run, "Print the plan and change nothing");
  apply
      ->add_option("--on-error", on_error,
                   "When the kernel refuses a step: rollback (undo what landed; default), stop (keep it), "
                   "continue (send the remaining steps too)")
      ->check(CLI::IsMember({"rollback", "stop", "continue"}));
  apply->add_flag("--wait", apply_flags.wait, "Wait for another tcsync working on this namespace instead of failing");
  apply->add_flag("!--no-verify", apply_flags.verify,
                  "Do not check the result (the kernel's echo of each change; a dump where none tells)");
  apply
      ->add_option("--confirm", apply_flags.confirm_s,
                   "Restore the state before this apply after SECONDS unless `tcsync confirm` comes first (a separate "
                   "process does it: it survives the applier being killed)")
      ->check(CLI::Range(1, 86400));
  for (auto* c : {diff, apply})
    c->add_flag("--atomic", common.atomic,
                "Change the filter lists at ingress/egress by building them in a spare chain and switching with one "
                "replace, so no packet sees a half-applied list (needs flower and gact in the kernel)");
  auto* dump = app.add_subcommand("dump", "Print the live tc state as tcsync YAML (or JSON with --format json)");
  dump->add_option("--dev", devices, "Only this device (repeatable); default: every device with tc state");
  std::string dump_scope;
  dump->add_option(
      "--scope", dump_scope,
      "Only what FILE owns: its devices, each cut to its own: regions (the foreign objects left out), with its own:");

  auto* schema = app.add_subcommand("schema", "Print the JSON Schema of the file format (for editors)");
  std::string import_file;
  auto* import = app.add_subcommand("import", "Print a tc batch file or script of tc commands as a tcsync file");
  import->add_option("FILE", import_file, "tc -b file or shell script of tc lines; - for stdin")->required();
  bool skip_shell = false;
  import->add_flag("--skip-shell", skip_shell,
                   "Skip a script's shell constructs (loops, conditionals, functions, variables) with a warning "
                   "instead of refusing the file: the file then lacks what they would make");

  tcsync::WatchFlags watch_flags;
  auto* watch =
      app.add_subcommand("watch",
                         "Apply the files, then keep the kernel equal to them: repair drift, apply devices that "
                         "appear, follow edits of the files (one event a line on stdout)");
  watch->add_option("FILE", files, "tcsync YAML files")->required();
  watch
      ->add_option("--debounce", watch_flags.debounce_ms,
                   "Milliseconds after a device's last event before it is re-planned")
      ->capture_default_str()
      ->check(CLI::Range(0, 60000));
  watch
      ->add_option("--max-delay", watch_flags.max_delay_ms,
                   "Milliseconds after a device's first event by which it is re-planned even if events go on")
      ->capture_default_str()
      ->check(CLI::Range(0, 600000));
  watch
      ->add_option(
          "--repair-limit", watch_flags.repair_limit,
          "Repairs of one object within --repair-window that make it a conflict (no longer repaired until SIGHUP)")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  watch->add_option("--repair-window", watch_flags.repair_window_s, "Seconds of the repair count window")
      ->capture_default_str()
      ->check(CLI::Range(1, 86400));
  watch
      ->add_option(
          "--rcvbuf", watch_flags.rcvbuf,
          "Receive buffer of the event socket, bytes: events beyond it are lost and every device is planned again")
      ->capture_default_str()
      ->check(CLI::Range(1024, 1 << 30));

  auto* confirm = app.add_subcommand("confirm", "Keep the state of the pending `apply --confirm` (no revert)");
  std::string pending_file;
  long long deadline_ms = 0;
  auto* revert = app.add_subcommand("revert-pending", "Internal: started by apply --confirm");
  revert->group("");  // not in --help
  revert->add_option("--deadline-ms", deadline_ms)->required();
  int state_fd = -1, netns_fd = -1;
  revert->add_option("--state-fd", state_fd)->required();
  revert->add_option("--netns-fd", netns_fd)->required();
  revert->add_option("FILE", pending_file)->required();

  tcsync::StatsFlags stats_flags;
  auto* stats = app.add_subcommand("stats",
                                   "Print the kernel's counters of the files' objects, named as the files name "
                                   "them (without files: every object); --format text, json, prometheus, dot");
  stats->add_option("FILE", files, "tcsync YAML files (optional)");
  // One value an occurrence: `--dev v0 site.yaml` is a device and a file.
  stats->add_option("--dev", stats_flags.devices, "Without files: only this device (repeatable)")
      ->allow_extra_args(false);
  stats->add_option("--output", stats_flags.output,
                    "Write to this file atomically (temporary + rename), e.g. node_exporter's textfile directory");
  stats->add_option("--watch", stats_flags.watch, "Refresh every SECONDS on the terminal, busiest first, with rates")
      ->check(CLI::PositiveNumber);
  stats->add_option("--leaf-limit", stats_flags.leaf_limit,
                    "--format dot: leaf classes drawn per parent; the least busy rest fold into one node (default 12)");

  // Options are accepted after the subcommand too: `tcsync diff --netns x f`.
  for (auto* sub : {validate, diff, apply, dump, schema, import, watch, confirm, revert, stats}) {
    sub->fallthrough();
  }
  // A first word that is no command is named (CLI11 would say only that a
  // subcommand is required): the app's own options before it take a value.
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--netns" || a == "--format" || a == "--color") {
      ++i;
      continue;
    }
    if (a.starts_with("-")) continue;
    std::vector<std::string_view> names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
      if (sub->get_name() != "revert-pending") names.push_back(sub->get_name());
    if (std::find(names.begin(), names.end(), a) != names.end() || a == "revert-pending") break;
    std::string msg = "tcsync: error: unknown command '" + std::string(a) + "'";
    if (auto dym = tcsync::did_you_mean(a, names); !dym.empty()) msg += "; did you mean '" + std::string(dym) + "'?";
    std::cerr << msg << "\nRun with --help for the commands.\n";
    return 1;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error is an error: exit 1.
    return app.exit(e) == 0 ? 0 : 1;
  }

  common.format = format == "json"         ? tcsync::Format::Json
                  : format == "prometheus" ? tcsync::Format::Prometheus
                  : format == "dot"        ? tcsync::Format::Dot
                                           : tcsync::Format::Text;
  if ((common.format == tcsync::Format::Prometheus || common.format == tcsync::Format::Dot) && !*stats) {
    std::cerr << "tcsync: error: --format " << format << " is for the stats command only\n";
    return 1;
  }
  if (*stats && !stats_flags.devices.empty() && !files.empty()) {
    std::cerr << "tcsync: error: stats: --dev is for a run without files (the files name their devices)\n";
    return 1;
  }
  if (*stats && stats_flags.watch > 0 && !stats_flags.output.empty()) {
    std::cerr << "tcsync: error: stats: --watch draws on the terminal; --output is for one reading\n";
    return 1;
  }
  bool tty = isatty(STDOUT_FILENO) && isatty(STDERR_FILENO);
  const char* no_color = std::getenv("NO_COLOR");
  common.color = color == "always" || (color == "auto" && tty && !(no_color && *no_color));
  // A progress bar only where a person watches: stderr a terminal.
  common.progress = isatty(STDERR_FILENO);

  if (*validate) return tcsync::cmd_validate(files, common, strict);
  if (*diff) return tcsync::cmd_diff(files, common, against);
  apply_flags.on_error = on_error == "stop"       ? tcsync::OnError::Stop
                         : on_error == "continue" ? tcsync::OnError::Continue
                                                  : tcsync::OnError::Rollback;
  if (*apply) return tcsync::cmd_apply(files, apply_flags, common);
  if (*dump) return tcsync::cmd_dump(devices, common, dump_scope);
  if (*watch) {
    // One JSON line per event, unless a person reads them (a terminal) or
    // --format text asks for text; --format json asks for JSON anyway.
    auto* f = app.get_option("--format");
    bool given = f->count() > 0;
    for (auto* sub : app.get_subcommands())
      if (sub->get_option_no_throw("--format") && sub->get_option_no_throw("--format")->count()) given = true;
    watch_flags.json = given ? common.format == tcsync::Format::Json : !isatty(STDOUT_FILENO);
    return tcsync::cmd_watch(files, watch_flags, common);
  }
  if (*confirm) return tcsync::cmd_confirm(common);
  if (*revert) return tcsync::cmd_revert_pending(pending_file, deadline_ms, state_fd, netns_fd, common);
  if (*import) return tcsync::cmd_import(import_file, skip_shell, common);
  if (*stats) return tcsync::cmd_stats(files, stats_flags, common);
  if (*schema) {
    std::cout << tcsync::yaml_json_schema();
    return 0;
  }
  return 1;
}
