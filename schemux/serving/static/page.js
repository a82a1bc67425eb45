// schemux's page: the panes as live pictures, the programs with their output, the calls
// of the audit log, each recorded one replayed in place with the asciinema player.
// Everything arrives as Server-Sent Events from /events; what is shown is set as text
// (textContent) or as a same-origin URL, never parsed as HTML. Nothing here types into a
// pane.
"use strict";

(function () {
  const panes = document.getElementById("panes");
  const programs = document.getElementById("programs");
  const timeline = document.getElementById("timeline");
  const status = document.getElementById("status");
  const failures = document.getElementById("failures");
  const shownPanes = new Map(); // "host pane" -> its figure
  const shownPrograms = new Map(); // "host id" -> its article
  const programCommands = new Map(); // program id -> what its call ran
  const latest = new Map(); // "pane host id" or "program host id" -> its newest event
  const MAX_CALLS = 500;
  let recordingOn = false; // whether this schemux records (programs' replay buttons)

  function element(tag, className, text) {
    const made = document.createElement(tag);
    if (className) made.className = className;
    if (text !== undefined) made.textContent = text;
    return made;
  }

  function paneNumber(id) {
    return id.replace(/^%/, "");
  }

  function showRoster(roster) {
    const panesNow = new Set();
    for (const pane of roster.panes) {
      const key = pane.host + " " + pane.id;
      panesNow.add(key);
      let figure = shownPanes.get(key);
      if (!figure) {
        figure = element("figure", "pane");
        figure.dataset.host = pane.host;
        figure.dataset.pane = pane.id;
        const img = element("img");
        img.alt = "pane " + pane.id;
        figure.append(img, element("figcaption"));
        panes.append(figure);
        shownPanes.set(key, figure);
        const told = latest.get("pane " + key);
        if (told) showPicture(told);
      }
      const where = pane.host === "local" ? "" : pane.host + ": ";
      figure.querySelector("figcaption").textContent =
        where + pane.id + " · " + pane.session + " · " + pane.command + (pane.dead ? " (dead)" : "");
    }
    for (const [key, figure] of shownPanes) {
      if (!panesNow.has(key)) {
        figure.remove();
        shownPanes.delete(key);
      }
    }
    const programsNow = new Set();
    for (const program of roster.programs) {
      const key = program.host + " " + program.id;
      programsNow.add(key);
      let article = shownPrograms.get(key);
      if (!article) {
        article = element("article", "program");
        article.dataset.host = program.host;
        article.dataset.program = program.id;
        const heading = element("h3");
        const output = element("pre", "output");
        article.append(heading, output);
        if (recordingOn) {
          const button = element("button", "replay", "replay");
          button.type = "button";
          button.addEventListener("click", () => replay(article, program.id));
          article.append(button);
        }
        programs.append(article);
        shownPrograms.set(key, article);
        const told = latest.get("program " + key);
        if (told) showOutput(told);
      }
      const command = programCommands.get(program.id);
      article.querySelector("h3").textContent =
        program.id + " · " + program.state + (command ? " · " + command : "");
      article.classList.toggle("ended", program.state !== "running");
    }
    for (const [key, article] of shownPrograms) {
      if (!programsNow.has(key)) {
        article.remove();
        shownPrograms.delete(key);
      }
    }
    document.getElementById("no-programs").hidden = shownPrograms.size > 0;
    const failed = Object.entries(roster.failures);
    failures.hidden = failed.length === 0;
    failures.textContent = failed.map(([host, why]) => host + ": " + why).join("\n");
  }

  function showPicture(event) {
    latest.set("pane " + event.host + " " + event.id, event);
    const figure = shownPanes.get(event.host + " " + event.id);
    if (!figure) return;
    const url = "/pictures/" + encodeURIComponent(event.host) + "/" + paneNumber(event.id);
    figure.querySelector("img").src = url + "?v=" + event.version;
    figure.dataset.version = String(event.version);
  }

  async function showOutput(event) {
    latest.set("program " + event.host + " " + event.id, event);
    const article = shownPrograms.get(event.host + " " + event.id);
    if (!article) return;
    const url = "/programs/" + encodeURIComponent(event.host) + "/" + encodeURIComponent(event.id);
    const response = await fetch(url, { cache: "no-store" });
    const text = response.ok ? await response.text() : "(its output is not kept any more)";
    const output = article.querySelector("pre");
    output.textContent = text;
    output.scrollTop = output.scrollHeight;
    article.dataset.version = String(event.version);
  }

  function replay(item, recording) {
    const old = item.querySelector(".player");
    if (old) {
      old.remove();
      return;
    }
    const holder = element("div", "player");
    item.append(holder);
    window.AsciinemaPlayer.create("/recordings/" + encodeURIComponent(recording), holder, {
      autoPlay: true,
      fit: "width",
      idleTimeLimit: 2,
    });
  }

  function showCalls(entries) {
    for (const entry of entries) {
      const item = element("li", "call");
      const when = entry.time ? new Date(entry.time).toLocaleTimeString() : "?";
      if (entry.gap !== undefined) {
        item.append(element("span", "gap", when + " · " + entry.gap + " calls not recorded"));
      } else {
        const took =
          entry.duration_ms === null ? "" : " · " + Math.round(entry.duration_ms) + " ms";
        item.append(
          element("time", null, when),
          element("span", "tool", entry.tool),
          element("span", "target", entry.target),
          element("span", "outcome " + (entry.outcome === "ok" ? "ok" : "failed"), entry.outcome + took),
          element("code", "ran", entry.ran),
        );
        if (entry.program && entry.ran) {
          programCommands.set(entry.program, entry.ran);
        }
        if (entry.recording) {
          item.dataset.recording = entry.recording;
          const button = element("button", "replay", "replay");
          button.type = "button";
          button.addEventListener("click", () => replay(item, entry.recording));
          item.append(button);
        }
      }
      timeline.prepend(item);
    }
    while (timeline.children.length > MAX_CALLS) timeline.lastElementChild.remove();
  }

  const events = new EventSource("/events");
  events.addEventListener("open", () => {
    status.textContent = "live";
    status.className = "status live";
  });
  events.addEventListener("error", () => {
    if (events.readyState === EventSource.CLOSED) {
      status.textContent = "disconnected: reload the page (or sign in again)";
    } else {
      status.textContent = "reconnecting…";
    }
    status.className = "status down";
  });
  events.addEventListener("hello", (message) => {
    const hello = JSON.parse(message.data);
    document.getElementById("signout").hidden = !hello.signin;
    document.getElementById("no-audit").hidden = hello.audit;
    recordingOn = hello.record;
  });
  events.addEventListener("roster", (message) => showRoster(JSON.parse(message.data)));
  events.addEventListener("pane", (message) => showPicture(JSON.parse(message.data)));
  events.addEventListener("program", (message) => showOutput(JSON.parse(message.data)));
  events.addEventListener("calls", (message) => showCalls(JSON.parse(message.data)));
})();
