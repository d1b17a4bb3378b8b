import { useEffect, useState } from 'react';

/** Seconds left until `deadline` (ms since the epoch), updated every second; null without one. */
export function useSecondsUntil(deadline: number | null): number | null {
  const [, setTicks] = useState(0);
  useEffect(() => {
    if (deadline === null) return;
    const id = window.setInterval(() => setTicks((t) => t + 1), 1000);
    return () => window.clearInterval(id);
  }, [deadline]);
  if (deadline === null) return null;
  return Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
}

/** Seconds left until a deadline fixed when the unit was loaded; null when there is no limit. */
export function useCountdown(secondsAtLoad: number | null): number | null {
  const [deadline] = useState(() =>
    secondsAtLoad === null || secondsAtLoad === undefined ? null : Date.now() + Math.max(0, secondsAtLoad) * 1000,
  );
  return useSecondsUntil(deadline);
}

export function formatDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const mm = String(m).padStart(h > 0 ? 2 : 1, '0');
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${mm}:${ss}` : `${mm}:${ss}`;
}

export function Countdown({ seconds, label = 'Time left' }: { seconds: number; label?: string }) {
  if (seconds <= 0) {
    return (
      <span className="countdown is-over" role="timer">
        Time is over
      </span>
    );
  }
  return (
    <span className={seconds < 300 ? 'countdown is-low' : 'countdown'} role="timer">
      {label} <strong>{formatDuration(seconds)}</strong>
    </span>
  );
}
