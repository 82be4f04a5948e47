"""The public API's boundary: errors, bad and hostile input, secrets kept out of errors, logs and plans."""
