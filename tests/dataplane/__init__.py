"""Moving data (dataplane/): scans, writers, delete files and deletion vectors, encryption, field ids, the small-
data path, failures mid-write."""
