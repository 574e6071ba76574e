module nusku.test/go_heap

go 1.19
