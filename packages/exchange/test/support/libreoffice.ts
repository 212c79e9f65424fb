import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A filter of LibreOffice and its option string (for text files: separator, quote, character set, ...). */
export interface Filter {
  name: string;
  options?: string;
}

/** A file opened in LibreOffice Calc and saved again as another. */
export interface Save {
  input: string;
  /** How the input is opened; default: as LibreOffice detects it. */
  open?: Filter;
  output: string;
  save: Filter;
}

/**
 * Files opened and saved by LibreOffice Calc (headless), through the filters and options its
 * dialogs use (the same that `soffice --convert-to` and `--infilter` take), all in one start of
 * LibreOffice: a start costs far more than a conversion, and `--convert-to` saves with one filter
 * a start. A Basic macro does the work, in a profile made for it.
 */
export async function libreOfficeSave(saves: readonly Save[]): Promise<void> {
  if (saves.length === 0) return;
  const profile = mkdtempSync(join(tmpdir(), 'rxs-lo-profile-'));
  try {
    writeProfile(profile);
    const jobs = join(profile, 'jobs.txt');
    const report = join(profile, 'report.txt');
    const line = (s: Save) =>
      [s.input, s.open?.name ?? '', s.open?.options ?? '', s.output, s.save.name, s.save.options ?? ''].join(
        '\t',
      );
    writeFileSync(jobs, saves.map((s) => `${line(s)}\n`).join(''));
    await soffice(profile, `macro:///Standard.Module1.SaveAll("${jobs}","${report}")`);
    const outcome = existsSync(report) ? readFileSync(report, 'utf8').trim() : 'it wrote no report';
    if (outcome !== 'ok') throw new Error(`LibreOffice's macro: ${outcome}`);
  } finally {
    rmSync(profile, { recursive: true, force: true });
  }
}

function soffice(profile: string, macro: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const run = spawn('soffice', [`-env:UserInstallation=file://${profile}`, '--headless', macro], {
      stdio: ['ignore', 'ignore', 'pipe'],
      timeout: 150_000,
    });
    let stderr = '';
    run.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    run.on('error', reject);
    run.on('close', (code, signal) =>
      code === 0 ? resolve() : reject(new Error(`soffice ${macro} failed (${code ?? signal}): ${stderr}`)),
    );
  });
}

/**
 * A profile holding the macro in its Standard library, marked as set up: LibreOffice copies its
 * presets (a Standard library among them, replacing this one) into a profile not marked so.
 */
function writeProfile(profile: string): void {
  const basic = join(profile, 'user/basic');
  mkdirSync(join(basic, 'Standard'), { recursive: true });
  const doctype = (root: string, dtd: string) =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE ${root} PUBLIC "-//OpenOffice.org//DTD OfficeDocument 1.0//EN" "${dtd}">\n`;
  const library = 'xmlns:library="http://openoffice.org/2000/library"';
  writeFileSync(
    join(profile, 'user/registrymodifications.xcu'),
    '<?xml version="1.0" encoding="UTF-8"?>\n<oor:items xmlns:oor="http://openoffice.org/2001/registry">\n' +
      '<item oor:path="/org.openoffice.Setup/Office"><prop oor:name="ooSetupInstCompleted" oor:op="fuse"><value>true</value></prop></item>\n' +
      '</oor:items>\n',
  );
  writeFileSync(
    join(basic, 'script.xlc'),
    `${doctype('library:libraries', 'libraries.dtd')}<library:libraries ${library} xmlns:xlink="http://www.w3.org/1999/xlink"><library:library library:name="Standard" library:link="false"/></library:libraries>\n`,
  );
  writeFileSync(
    join(basic, 'Standard/script.xlb'),
    `${doctype('library:library', 'library.dtd')}<library:library ${library} library:name="Standard" library:readonly="false" library:passwordprotected="false"><library:element library:name="Module1"/></library:library>\n`,
  );
  const code = SAVE_ALL.replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
  writeFileSync(
    join(basic, 'Standard/Module1.xba'),
    `${doctype('script:module', 'module.dtd')}<script:module xmlns:script="http://openoffice.org/2000/script" script:name="Module1" script:language="StarBasic">${code}</script:module>\n`,
  );
}

/**
 * Opens and saves the files a job list names (a line each: input, open filter, its options,
 * output, save filter, its options; tab separated), writes "ok" or where it failed to the report,
 * and ends LibreOffice.
 */
const SAVE_ALL = `
Function Prop(name As String, value) As com.sun.star.beans.PropertyValue
  Dim p As New com.sun.star.beans.PropertyValue
  p.Name = name
  p.Value = value
  Prop = p
End Function

Sub SaveAll(jobs As String, report As String)
  Dim n As Integer, entry As String, job, how, doc, where As String
  On Error GoTo Done
  n = FreeFile
  Open jobs For Input As #n
  Do While Not EOF(n)
    Line Input #n, entry
    If Len(entry) > 0 Then
      job = Split(entry, Chr(9))
      where = "opening " & job(0)
      If Len(job(1)) > 0 Then
        how = Array(Prop("Hidden", True), Prop("FilterName", job(1)), Prop("FilterOptions", job(2)))
      Else
        how = Array(Prop("Hidden", True))
      End If
      doc = StarDesktop.loadComponentFromURL(ConvertToURL(job(0)), "_blank", 0, how)
      where = "saving " & job(3)
      doc.storeToURL(ConvertToURL(job(3)), Array(Prop("FilterName", job(4)), Prop("FilterOptions", job(5))))
      doc.close(True)
    End If
  Loop
  Close #n
  where = ""
Done:
  Dim r As Integer
  r = FreeFile
  Open report For Output As #r
  If where = "" Then
    Print #r, "ok"
  Else
    Print #r, "failed " & where & ": " & Error$ & " (line " & Erl & ")"
  End If
  Close #r
  StarDesktop.terminate()
End Sub
`;
