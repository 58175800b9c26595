// tcsync: make a host's tc state equal to a YAML file.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <iostream>

#include "cli/commands.h"
#include "file/schema.h"

int main(int argc, char** argv) {
  CLI::App app{"tcsync: make a host's traffic control (tc) state equal to a YAML file"};
  app.footer(R"(Examples:
  tcsync validate site.yaml              check a file, touch nothing
  tcsync diff site.yaml                  show the plan; exit 0 in sync, 2 changes pending
  tcsync apply site.yaml                 make the kernel match the file
  tcsync apply --dry-run site.yaml       print the plan, change nothing
  tcsync dump --dev eth0 > eth0.yaml     write live state as a file apply accepts back
  tcsync --netns lab1 diff site.yaml     work inside the network namespace 'lab1'

Exit codes: 0 done or in sync, 1 error, 2 changes pending (diff).)");
  app.set_version_flag("--version", std::string("tcsync ") + TCSYNC_VERSION);
  app.require_subcommand(1);

  tcsync::CommonOptions common;
  std::string format = "text", color = "auto";
  app.add_option("--netns", common.netns, "Network namespace name (as `ip netns` makes them)");
  app.add_option("--format", format, "Output format: text or json (every command; the shapes are in schemas/)")->check(CLI::IsMember({"text", "json"}));
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
  diff->add_option("--against", against, "Compare with a saved `tcsync dump` instead of the kernel (no privilege needed)");
  const char* deep_help = "Compare every rule in full, even flower rules whose fingerprint cookie says unchanged";
  diff->add_flag("--deep", common.deep, deep_help);
  auto* apply = app.add_subcommand("apply", "Make the kernel's tc state equal to the files");
  apply->add_flag("--deep", common.deep, deep_help);
  apply->add_option("FILE", files, "tcsync YAML files")->required();
  apply->add_flag("--dry-run", apply_flags.dry_run, "Print the plan and change nothing");
  apply->add_option("--on-error", on_error,
                    "When the kernel refuses a step: rollback (undo what landed; default), stop (keep it), "
                    "continue (send the remaining steps too)")
      ->check(CLI::IsMember({"rollback", "stop", "continue"}));
  apply->add_flag("--wait", apply_flags.wait, "Wait for another tcsync working on this namespace instead of failing");
  apply->add_flag("!--no-verify", apply_flags.verify, "Do not check the result (the kernel's echo of each change; a dump where none tells)");
  for (auto* c : {diff, apply})
    c->add_flag("--atomic", common.atomic,
                "Change the filter lists at ingress/egress by building them in a spare chain and switching with one "
                "replace, so no packet sees a half-applied list (needs flower and gact in the kernel)");
  auto* dump = app.add_subcommand("dump", "Print the live tc state as tcsync YAML (or JSON with --format json)");
  dump->add_option("--dev", devices, "Only this device (repeatable); default: every device with tc state");

  auto* schema = app.add_subcommand("schema", "Print the JSON Schema of the file format (for editors)");
  std::string import_file;
  auto* import = app.add_subcommand("import", "Print a tc batch file or script of tc commands as a tcsync file");
  import->add_option("FILE", import_file, "tc -b file or shell script of tc lines; - for stdin")->required();

  // Options are accepted after the subcommand too: `tcsync diff --netns x f`.
  for (auto* sub : {validate, diff, apply, dump, schema, import}) {
    sub->fallthrough();
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; a usage error is an error: exit 1.
    return app.exit(e) == 0 ? 0 : 1;
  }

  common.format = format == "json" ? tcsync::Format::Json : tcsync::Format::Text;
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
  if (*dump) return tcsync::cmd_dump(devices, common);
  if (*import) return tcsync::cmd_import(import_file, common);
  if (*schema) {
    std::cout << tcsync::yaml_json_schema();
    return 0;
  }
  return 1;
}
