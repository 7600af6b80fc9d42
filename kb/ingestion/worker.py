def start_background_worker() -> None:
    return None
