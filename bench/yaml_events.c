/* The floor of any loader built on libyaml: reads a file's events and does
 * nothing else. Build and run (bench/RESULTS.md, "1M flower diff"):
 *   gcc -O2 bench/yaml_events.c -o /tmp/yaml_events -lyaml
 *   /usr/bin/time -v /tmp/yaml_events /tmp/f1m.yaml */
#include <stdio.h>
#include <yaml.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: yaml_events FILE\n");
    return 2;
  }
  FILE* f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  yaml_parser_t p;
  yaml_parser_initialize(&p);
  yaml_parser_set_input_file(&p, f);
  long events = 0, scalars = 0;
  for (;;) {
    yaml_event_t e;
    if (!yaml_parser_parse(&p, &e)) {
      fprintf(stderr, "%s:%zu: %s\n", argv[1], p.problem_mark.line + 1, p.problem ? p.problem : "parse error");
      return 1;
    }
    int t = e.type;
    ++events;
    if (t == YAML_SCALAR_EVENT) ++scalars;
    yaml_event_delete(&e);
    if (t == YAML_STREAM_END_EVENT) break;
  }
  printf("%ld events, %ld scalars\n", events, scalars);
  yaml_parser_delete(&p);
  fclose(f);
  return 0;
}
