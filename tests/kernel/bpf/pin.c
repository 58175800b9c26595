// Test helper: loads one section of a BPF object as a tc classifier and pins
// it (what `bpftool prog load` does; bpftool is not installed here).
// usage: pin OBJECT SECTION PATH   (PATH in a mounted BPF file system)
#include <bpf/libbpf.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s OBJECT SECTION PATH\n", argv[0]);
    return 2;
  }
  struct bpf_object* obj = bpf_object__open_file(argv[1], NULL);
  if (!obj) {
    perror(argv[1]);
    return 1;
  }
  struct bpf_program *p, *want = NULL;
  bpf_object__for_each_program(p, obj) {
    if (!want && strcmp(bpf_program__section_name(p), argv[2]) == 0) want = p;
    else bpf_program__set_autoload(p, false);
  }
  if (!want) {
    fprintf(stderr, "%s: no section %s\n", argv[1], argv[2]);
    return 1;
  }
  bpf_program__set_type(want, BPF_PROG_TYPE_SCHED_CLS);
  if (bpf_object__load(obj) != 0 || bpf_program__pin(want, argv[3]) != 0) {
    perror("load and pin");
    return 1;
  }
  bpf_object__close(obj);
  return 0;
}
