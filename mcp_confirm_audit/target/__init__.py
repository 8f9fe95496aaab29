"""Starting and reaching the server under test: launch, driver, reaper, discovery."""
