"""The census: what each paper-scale job needs, counted from the code before it runs."""
