package phonepilot.helper;

/** What the helper does at exit, and how it tells the time: the system's on a phone, replaced in tests. */
interface Host {
    void exit(int status);

    long now();
}
