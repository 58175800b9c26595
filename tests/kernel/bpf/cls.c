// Tiny tc classifiers for tests/kernel/test_bpf.sh, built with
// `clang -O2 -target bpf -c` and no kernel headers: the few names needed are
// declared here. Two programs with different instructions (so different
// tags) let a test change a rule's program.
#define SEC(name) __attribute__((section(name), used))

struct __sk_buff {  // the first fields of the kernel's context, in its order
  unsigned int len;
  unsigned int pkt_type;
  unsigned int mark;
};

// Short packets: -1 (the filter's classid / TC_ACT_UNSPEC with da), long ones 0.
SEC("classifier") int cls_len(struct __sk_buff* skb) { return skb->len > 100 ? 0 : -1; }

// Marks every packet and lets it pass (TC_ACT_OK).
SEC("mark") int cls_mark(struct __sk_buff* skb) {
  skb->mark = 7;
  return 0;
}

char _license[] SEC("license") = "GPL";
