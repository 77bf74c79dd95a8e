"""doctor: one honest verdict on a training namespace."""
